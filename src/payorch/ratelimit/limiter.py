"""Who is counted, against which limit, in which storage.

- A request with a valid API key counts against its application: PAYORCH_RATE_LIMIT
  (default 100/second), shared by all the application's keys.
- A request without a valid key (missing, malformed, unknown, revoked) counts against its
  client address, with a tenth of that limit (at least 1): guessing keys stays slow.

Fixed windows (O(1) per request: one counter and its expiry). Memory storage per process by
default; with PAYORCH_REDIS_URL the counters live in Redis and every replica shares them.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter
from limits.storage import storage_from_string

from payorch.config import Settings

ANONYMOUS_DIVISOR = 10
NAMESPACE = "payorch"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int  # until the window ends


def _item(amount: int, unit: str) -> RateLimitItem:
    return RateLimitItemPerSecond(amount) if unit == "second" else RateLimitItemPerMinute(amount)


def build_storage(settings: Settings) -> Storage:
    if settings.redis_url:
        storage: Storage = storage_from_string("async+" + settings.redis_url)  # type: ignore[assignment]
        return storage
    return MemoryStorage()


class RateLimiter:
    def __init__(self, settings: Settings, storage: Storage | None = None) -> None:
        amount, unit = settings.rate_limit_parts
        self.per_application = _item(amount, unit)
        self.per_address = _item(max(1, amount // ANONYMOUS_DIVISOR), unit)
        self._strategy = FixedWindowRateLimiter(storage or build_storage(settings))

    async def hit_application(self, application_id: str) -> Decision:
        return await self._hit(self.per_application, "app", application_id)

    async def hit_address(self, address: str) -> Decision:
        return await self._hit(self.per_address, "addr", address)

    async def _hit(self, item: RateLimitItem, kind: str, who: str) -> Decision:
        allowed = await self._strategy.hit(item, NAMESPACE, kind, who)
        stats = await self._strategy.get_window_stats(item, NAMESPACE, kind, who)
        reset = max(1, math.ceil(stats.reset_time - time.time()))
        return Decision(allowed, item.amount, stats.remaining, reset)
