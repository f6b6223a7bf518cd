"""Outcome counts per (merchant, currency, provider) in time buckets: where they are kept.

A bucket is BUCKET_SECONDS of the runtime clock; a provider's window is its newest buckets, back
at most ``window_seconds`` and no further once ``window_attempts`` attempts are counted (so a
busy provider is judged on its last few hundred payments and a quiet one on the last minutes).

In-process by default; shared by every API process through Redis when PAYORCH_REDIS_URL is set,
as provider health is (providers/health.py). While Redis is skipped (redis_client.py) counts go
to, and are read from, this process's own store; once Redis answers its counts are used again
(the local ones are not copied over: a rate is an estimate, the window refills in minutes).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis

from payorch.clock import Clock
from payorch.redis_client import RedisUnavailable, SharedRedis

BUCKET_SECONDS = 10


@dataclass(frozen=True, slots=True)
class Tally:
    authorized: int = 0
    failed: int = 0  # declined by the provider, or the provider in error

    @property
    def attempts(self) -> int:
        return self.authorized + self.failed


@dataclass(frozen=True, slots=True)
class Window:
    seconds: int
    attempts: int


class OutcomeCounts(Protocol):
    async def add(self, key: str, authorized: bool) -> None: ...

    async def window(self, keys: Sequence[str]) -> list[Tally]:
        """Each key's tally over its window, in the order given."""
        ...


def count_key(merchant_account_id: str, currency: str, provider: str) -> str:
    return f"{merchant_account_id}:{currency}:{provider}"


def _summed(buckets: Sequence[tuple[int, int]], window: Window) -> Tally:
    """Newest bucket first, until the window's attempts are reached."""
    authorized = failed = 0
    for ok, bad in buckets:
        authorized, failed = authorized + ok, failed + bad
        if authorized + failed >= window.attempts:
            break
    return Tally(authorized, failed)


class InProcessCounts:
    def __init__(self, clock: Clock, window: Window) -> None:
        self._clock = clock
        self._window = window
        self._length = max(1, window.seconds // BUCKET_SECONDS)
        # key -> buckets, oldest first: [bucket number, authorized, failed]
        self._buckets: dict[str, deque[list[int]]] = {}

    def _bucket(self) -> int:
        return int(self._clock.now().timestamp()) // BUCKET_SECONDS

    async def add(self, key: str, authorized: bool) -> None:
        now = self._bucket()
        buckets = self._buckets.setdefault(key, deque(maxlen=self._length))
        if not buckets or buckets[-1][0] != now:
            buckets.append([now, 0, 0])
        buckets[-1][1 if authorized else 2] += 1

    async def window(self, keys: Sequence[str]) -> list[Tally]:
        oldest = self._bucket() - self._length + 1
        tallies = []
        for key in keys:
            buckets = self._buckets.get(key, ())
            recent = [(ok, bad) for number, ok, bad in reversed(buckets) if number >= oldest]
            tallies.append(_summed(recent, self._window))
        return tallies


class RedisCounts:
    """One Redis counter per key, bucket and outcome, expiring with the window."""

    def __init__(self, redis: SharedRedis, clock: Clock, window: Window, prefix: str = "payorch:") -> None:
        self._shared = redis
        self._clock = clock
        self._window = window
        self._length = max(1, window.seconds // BUCKET_SECONDS)
        self._ttl = self._length * BUCKET_SECONDS + BUCKET_SECONDS
        self._prefix = prefix + "rates:"
        self._local = InProcessCounts(clock, window)

    def _bucket(self) -> int:
        return int(self._clock.now().timestamp()) // BUCKET_SECONDS

    async def add(self, key: str, authorized: bool) -> None:
        name = f"{self._prefix}{key}:{self._bucket()}:{'ok' if authorized else 'failed'}"

        async def count(client: Redis) -> None:
            async with client.pipeline(transaction=False) as pipe:
                pipe.incr(name)
                pipe.expire(name, self._ttl)
                await pipe.execute()

        try:
            await self._shared.run(count)
        except RedisUnavailable:
            await self._local.add(key, authorized)

    async def window(self, keys: Sequence[str]) -> list[Tally]:
        now = self._bucket()
        numbers = range(now, now - self._length, -1)  # newest first
        names = [
            f"{self._prefix}{key}:{number}:{outcome}"
            for key in keys
            for number in numbers
            for outcome in ("ok", "failed")
        ]

        async def read(client: Redis) -> list[bytes | str | None]:
            values: list[bytes | str | None] = await client.mget(names)
            return values

        try:
            values = await self._shared.run(read)
        except RedisUnavailable:
            return await self._local.window(keys)
        per_key = 2 * self._length
        tallies = []
        for index in range(len(keys)):
            mine = values[index * per_key : (index + 1) * per_key]
            pairs = [(int(mine[i] or 0), int(mine[i + 1] or 0)) for i in range(0, per_key, 2)]
            tallies.append(_summed(pairs, self._window))
        return tallies
