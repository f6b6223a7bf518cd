"""The process's one Redis client (PAYORCH_REDIS_URL) and the circuit every use of it goes through.

Redis only shares what each process could also keep by itself (rate-limit counters, provider
health), so no request waits for it: every command has a short connect and read timeout
(PAYORCH_REDIS_TIMEOUT_SECONDS) and no retry. A use that fails falls back to this process's own
state (RedisUnavailable). A refused or reset connection (or an error answer) opens the circuit at
once; a timeout opens it only after PAYORCH_REDIS_TIMEOUTS_TO_SKIP timeouts in a row, because one
slow answer on a loaded host (CPU-starved event loop, 50 ms) is no outage: under load on one
machine a single timeout opened it 5-6 times an hour, each time keeping limits per process for
PAYORCH_REDIS_RETRY_SECONDS. While open, every use skips Redis at once, without touching the
network. After PAYORCH_REDIS_RETRY_SECONDS the
next use is let through as a probe (the others keep skipping meanwhile); its success closes the
circuit, its failure opens it for another period. What each use does while Redis is skipped is
written at the use (ratelimit/limiter.py, providers/health.py) and in docs/deployment.md.

/metrics shows ``payorch_redis_circuit_state``: 1 while Redis is being skipped, else 0.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from payorch.observability.metrics import set_redis_circuit_open

log = logging.getLogger("payorch.redis")

T = TypeVar("T")


class RedisUnavailable(Exception):
    """Redis was skipped (the circuit is open) or failed this time: use the local fallback."""


class Circuit:
    """Closed: every use goes to Redis. Open: none does, until ``retry_seconds`` have passed since
    the last failure; then one use probes. It opens on a failure, or on the ``timeouts``-th
    timeout in a row (a success in between starts the count again). Single event loop: no lock
    needed."""

    def __init__(
        self, retry_seconds: float, timeouts: int, now: Callable[[], float] = time.monotonic
    ) -> None:
        self._retry = retry_seconds
        self._timeouts = timeouts
        self._now = now
        self._open_until: float | None = None  # None: closed
        self._timed_out = 0  # timeouts in a row while closed

    @property
    def is_open(self) -> bool:
        return self._open_until is not None

    def admit(self) -> bool:
        if self._open_until is None:
            return True
        now = self._now()
        if now < self._open_until:
            return False
        self._open_until = now + self._retry  # this use is the probe; the others keep skipping
        return True

    def succeeded(self) -> None:
        self._timed_out = 0
        if self._open_until is not None:
            self._open_until = None
            set_redis_circuit_open(False)
            log.warning("Redis answers again: shared rate limits and provider health resumed")

    def timed_out(self, error: BaseException) -> None:
        """A command got no answer in time: the circuit opens only at the ``timeouts``-th in a
        row (while closed; an open circuit's probe that times out reopens it at once)."""
        self._timed_out += 1
        if self._open_until is None and self._timed_out < self._timeouts:
            log.info("Redis answered late (%s), %d in a row", error, self._timed_out)
            return
        self.failed(error)

    def failed(self, error: BaseException) -> None:
        self._timed_out = 0
        if self._open_until is None:
            set_redis_circuit_open(True)
            log.warning(
                "Redis unavailable (%s): rate limits and provider health are kept per process; "
                "retrying every %ss",
                error,
                self._retry,
            )
        self._open_until = self._now() + self._retry


class SharedRedis:
    """The client and its circuit: ``run`` is the only way to send Redis a command."""

    def __init__(self, client: Redis, circuit: Circuit) -> None:
        self.client = client
        self.circuit = circuit

    @classmethod
    def from_url(
        cls, url: str, timeout_seconds: float, retry_seconds: float, timeouts_to_skip: int
    ) -> SharedRedis:
        client = Redis.from_url(
            url,
            socket_timeout=timeout_seconds,
            socket_connect_timeout=timeout_seconds,
            # No retry (said explicitly: redis-py's Redis() default retries 10 times with
            # backoff): the circuit decides when Redis is tried again.
            retry=Retry(NoBackoff(), 0),
        )
        return cls(client, Circuit(retry_seconds, timeouts_to_skip))

    async def run(self, command: Callable[[Redis], Awaitable[T]]) -> T:
        """``command``'s answer, or RedisUnavailable at once while the circuit is open, or after at
        most the timeout when Redis fails."""
        if not self.circuit.admit():
            raise RedisUnavailable("skipped: the Redis circuit is open")
        try:
            answer = await command(self.client)
        except (RedisTimeoutError, TimeoutError) as exc:
            self.circuit.timed_out(exc)
            raise RedisUnavailable(str(exc)) from exc
        except (RedisError, OSError) as exc:
            self.circuit.failed(exc)
            raise RedisUnavailable(str(exc)) from exc
        self.circuit.succeeded()
        return answer

    async def aclose(self) -> None:
        await self.client.aclose()
