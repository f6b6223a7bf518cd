"""Provider health: skip a provider after repeated failures, then let one trial call decide.

Per key (see ``health_key``) we keep the number of consecutive failures and, once it reaches
PAYORCH_PROVIDER_FAILURE_THRESHOLD, a "skipped until" moment PAYORCH_PROVIDER_SKIP_SECONDS
ahead. While skipped, ``admit`` says no (``auto`` routing moves on). When the period is over,
the first ``admit`` is the trial: it pushes "skipped until" forward again, so concurrent
requests keep skipping while the trial is in flight (half-open); a success resets the key, a
failure starts a new skip period.

In-process by default; shared by every replica through Redis when PAYORCH_REDIS_URL is set.
Both use the runtime clock (tests move it with FrozenClock). While Redis is skipped
(redis_client.py: down, hung, or its circuit open) the Redis store keeps the state in this
process instead, as without Redis: a provider failing meanwhile is still skipped here, and each
replica finds that out by itself. Once Redis answers again its state is used (the local one is
not copied over: health is an optimisation, a provider found failing is found again).

``failed`` and ``succeeded`` say when they changed the state (skipped; available again): routing
writes those transitions to the health history (routing/health_history.py, docs/routing.md).

/metrics shows ``payorch_provider_health_state{provider}``: 1 while any key of that provider is
skipped as far as this process knows (its own calls, or Redis's answers to them), 0 once none
is. Only transitions touch the gauge; the common case costs one empty-dict check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from redis.asyncio import Redis

from payorch.clock import Clock
from payorch.config import REDIS_RETRY_SECONDS, REDIS_TIMEOUT_SECONDS, REDIS_TIMEOUTS_TO_SKIP
from payorch.observability.metrics import HealthState, set_provider_health
from payorch.redis_client import RedisUnavailable, SharedRedis


@dataclass(frozen=True)
class Admission:
    allowed: bool
    trial: bool = False  # this call decides whether a skipped provider is back
    retry_after_seconds: int = 0  # when refused: how long until the next trial


class ProviderHealth(Protocol):
    async def admit(self, key: str) -> Admission: ...

    async def succeeded(self, key: str) -> bool:
        """Forget the key's failures; True when it was skipped (a transition: available again)."""
        ...

    async def failed(self, key: str) -> bool:
        """Count a failure; True when this one made the key skipped (a transition)."""
        ...

    async def skipped_until(self, key: str) -> datetime | None:
        """When a skipped key gets its next trial; None when the provider is available (a read:
        unlike ``admit``, it never starts a trial). The dashboard shows it."""
        ...

    async def aclose(self) -> None: ...


def health_key(provider: str, mode: str, connector_id: str) -> str:
    """MOCK connectors are judged one by one (simulator faults are per application); a real
    provider's outage concerns every merchant, so SANDBOX/PRODUCTION share one key per mode."""
    if mode == "MOCK":
        return f"{provider}:MOCK:{connector_id}"
    return f"{provider}:{mode}"


def _retry_after(seconds: float) -> int:
    return max(1, math.ceil(seconds))


class _SkippedKeys:
    """The keys this store knows to be skipped, by provider; drives the health gauge."""

    __slots__ = ("_by_provider",)

    def __init__(self) -> None:
        self._by_provider: dict[str, set[str]] = {}

    def skipped(self, key: str) -> None:
        provider = key.split(":", 1)[0]
        keys = self._by_provider.setdefault(provider, set())
        if key not in keys:
            keys.add(key)
            if len(keys) == 1:
                set_provider_health(provider, HealthState.SKIPPED)

    def available(self, key: str) -> None:
        if not self._by_provider:
            return  # nothing skipped: the hot path
        provider = key.split(":", 1)[0]
        keys = self._by_provider.get(provider)
        if keys is None or key not in keys:
            return
        keys.discard(key)
        if not keys:
            del self._by_provider[provider]
            set_provider_health(provider, HealthState.AVAILABLE)


class InProcessHealth:
    def __init__(
        self, clock: Clock, threshold: int, skip_seconds: float, skipped: _SkippedKeys | None = None
    ) -> None:
        self._clock = clock
        self._threshold = threshold
        self._skip = skip_seconds
        self._state: dict[str, tuple[int, float]] = {}  # key -> (failures, skipped_until)
        self._skipped = skipped or _SkippedKeys()

    def _now(self) -> float:
        return self._clock.now().timestamp()

    async def admit(self, key: str) -> Admission:
        failures, until = self._state.get(key, (0, 0.0))
        if failures < self._threshold:
            return Admission(True)
        now = self._now()
        if now < until:
            return Admission(False, retry_after_seconds=_retry_after(until - now))
        self._state[key] = (failures, now + self._skip)
        return Admission(True, trial=True)

    async def succeeded(self, key: str) -> bool:
        failures, _ = self._state.pop(key, (0, 0.0))
        self._skipped.available(key)
        return failures >= self._threshold

    async def failed(self, key: str) -> bool:
        failures, until = self._state.get(key, (0, 0.0))
        failures += 1
        if failures >= self._threshold:
            until = self._now() + self._skip
            self._skipped.skipped(key)
        self._state[key] = (failures, until)
        return failures == self._threshold

    async def skipped_until(self, key: str) -> datetime | None:
        failures, until = self._state.get(key, (0, 0.0))
        return _until(failures >= self._threshold, until, self._now())

    async def aclose(self) -> None:
        return None


def _until(skipped: bool, until: float, now: float) -> datetime | None:
    return datetime.fromtimestamp(until, UTC) if skipped and until > now else None


# Atomic on the Redis server, so every replica sees one counter and exactly one trial.
# Times are whole milliseconds (Lua numbers are doubles; integers stay exact).
_ADMIT = """
local failures = tonumber(redis.call('HGET', KEYS[1], 'failures') or '0')
if failures < tonumber(ARGV[1]) then return {1, 0, 0} end
local now = tonumber(ARGV[2])
local untl = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if now < untl then return {0, 0, untl - now} end
redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[3]))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {1, 1, 0}
"""

_FAILED = """
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if failures >= tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'until', tonumber(ARGV[2]) + tonumber(ARGV[3]))
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return failures
"""

# The failures before forgetting them: more than the threshold's worth means it was skipped.
_SUCCEEDED = """
local failures = tonumber(redis.call('HGET', KEYS[1], 'failures') or '0')
redis.call('DEL', KEYS[1])
return failures
"""


class RedisHealth:
    def __init__(
        self,
        redis: SharedRedis,
        clock: Clock,
        threshold: int,
        skip_seconds: float,
        prefix: str = "payorch:",
        owns_redis: bool = False,
    ) -> None:
        self._shared = redis
        self._redis = redis.client
        self._owns_redis = owns_redis
        self._clock = clock
        self._threshold = threshold
        self._prefix = prefix + "health:"
        # Forget a key well after its last failure (a day, or longer for long skip periods).
        self._ttl = int(max(86400, skip_seconds * 10))
        self._skip_ms = int(skip_seconds * 1000)
        self._admit = self._redis.register_script(_ADMIT)
        self._failed = self._redis.register_script(_FAILED)
        self._succeeded = self._redis.register_script(_SUCCEEDED)
        self._skipped = _SkippedKeys()
        # While Redis is skipped; one gauge for both, so a key skipped here is shown either way.
        self._local = InProcessHealth(clock, threshold, skip_seconds, self._skipped)

    @classmethod
    def from_url(
        cls,
        url: str,
        clock: Clock,
        threshold: int,
        skip_seconds: float,
        prefix: str = "payorch:",
        timeout_seconds: float = REDIS_TIMEOUT_SECONDS,
        retry_seconds: float = REDIS_RETRY_SECONDS,
    ) -> RedisHealth:
        """A store with a Redis client and circuit of its own (closed by ``aclose``)."""
        redis = SharedRedis.from_url(url, timeout_seconds, retry_seconds, REDIS_TIMEOUTS_TO_SKIP)
        return cls(redis, clock, threshold, skip_seconds, prefix, owns_redis=True)

    def _now_ms(self) -> int:
        return int(self._clock.now().timestamp() * 1000)

    def _args(self) -> list[int]:
        return [self._threshold, self._now_ms(), self._skip_ms, self._ttl]

    async def admit(self, key: str) -> Admission:
        async def admit(client: Redis) -> list[int]:
            answer: list[int] = await self._admit([self._prefix + key], self._args(), client)
            return answer

        try:
            allowed, trial, wait = await self._shared.run(admit)
        except RedisUnavailable:
            return await self._local.admit(key)
        if int(allowed):
            if int(trial):
                self._skipped.skipped(key)  # perhaps tripped by another replica
                return Admission(True, trial=True)
            self._skipped.available(key)  # perhaps recovered by another replica's trial
            return Admission(True)
        self._skipped.skipped(key)
        return Admission(False, retry_after_seconds=_retry_after(int(wait) / 1000))

    async def succeeded(self, key: str) -> bool:
        async def forget(client: Redis) -> int:
            return int(await self._succeeded([self._prefix + key], [], client))

        try:
            failures = await self._shared.run(forget)
        except RedisUnavailable:
            return await self._local.succeeded(key)
        self._skipped.available(key)
        return failures >= self._threshold

    async def failed(self, key: str) -> bool:
        async def count(client: Redis) -> int:
            return int(await self._failed([self._prefix + key], self._args(), client))

        try:
            failures = await self._shared.run(count)
        except RedisUnavailable:
            return await self._local.failed(key)
        if failures >= self._threshold:
            self._skipped.skipped(key)
        return failures == self._threshold  # atomic on the server: one replica sees it

    async def skipped_until(self, key: str) -> datetime | None:
        async def read(client: Redis) -> list[bytes | str | None]:
            return await client.hmget(self._prefix + key, ["failures", "until"])

        try:
            failures, until = await self._shared.run(read)
        except RedisUnavailable:
            return await self._local.skipped_until(key)
        skipped = int(failures or 0) >= self._threshold
        return _until(skipped, int(until or 0) / 1000, self._now_ms() / 1000)

    async def aclose(self) -> None:
        if self._owns_redis:
            await self._shared.aclose()


def build_health(
    clock: Clock, redis: SharedRedis | None, threshold: int, skip_seconds: float
) -> ProviderHealth:
    if redis is not None:
        return RedisHealth(redis, clock, threshold, skip_seconds)
    return InProcessHealth(clock, threshold, skip_seconds)
