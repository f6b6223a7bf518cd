"""Who is counted, against which limit, in which storage.

- A request with a valid API key counts against its application: PAYORCH_RATE_LIMIT
  (default 100/second), shared by all the application's keys.
- A request without a valid key (missing, malformed, unknown, revoked) counts against its
  client address, with a tenth of that limit (at least 1): guessing keys stays slow.

- A write to simulated provider A with its published integration keys (the simulator's
  shared "public" owner: anyone may present them) counts against its client address:
  PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT (default 30/minute), checked by the simulator itself.
- A buyer's "Pay" on a payment link counts against the link (PAYORCH_PAYMENT_LINK_PAY_RATE_LIMIT)
  and against its client address (PAYORCH_PAYMENT_LINK_PAY_ADDRESS_RATE_LIMIT), checked by the
  buyer page itself: opening the page creates nothing and is not counted.

Fixed windows (the ``limits`` fixed-window rule: a counter per window, allowed while the count
is within the limit). O(1) per request: one increment, which also answers when the window ends.
Memory storage per process by default; with PAYORCH_REDIS_URL the counters live in Redis (one
round trip, in the key layout of the ``limits`` Redis storage) and every replica shares them.

While Redis is skipped (redis_client.py: down, hung, or its circuit open) each process counts in
its own memory, as without Redis: every limit still holds per replica, so N replicas allow up to
N times the setting. Nothing is refused, and no request waits, because Redis is away.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage
from redis.asyncio import Redis

from payorch.config import Settings
from payorch.redis_client import RedisUnavailable, SharedRedis

ANONYMOUS_DIVISOR = 10
NAMESPACE = "payorch"
# The prefix of the ``limits`` Redis storage, so replicas of an earlier release share the counters.
REDIS_KEY_PREFIX = "LIMITS:"
# The ``limits`` incr_expire script, answering the window's remaining milliseconds too.
_INCR_EXPIRE = """
local count = redis.call('INCRBY', KEYS[1], 1)
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}
"""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int  # until the window ends


def client_address(scope: Mapping[str, Any]) -> str:
    """The peer's address (proxy headers are not trusted: docs/deployment.md)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _item(amount: int, unit: str) -> RateLimitItem:
    return RateLimitItemPerSecond(amount) if unit == "second" else RateLimitItemPerMinute(amount)


class _RedisWindows:
    def __init__(self, redis: SharedRedis) -> None:
        self._redis = redis
        self._incr = redis.client.register_script(_INCR_EXPIRE)

    async def hit(self, key: str, expiry: int) -> tuple[int, float]:
        """The window's count after this hit, and when the window ends (epoch seconds)."""

        async def incr(client: Redis) -> list[int]:
            answer: list[int] = await self._incr([REDIS_KEY_PREFIX + key], [expiry], client)
            return answer

        count, ttl_ms = await self._redis.run(incr)
        return int(count), time.time() + max(0, int(ttl_ms)) / 1000


class RateLimiter:
    def __init__(self, settings: Settings, redis: SharedRedis | None = None) -> None:
        amount, unit = settings.rate_limit_parts
        self.per_application = _item(amount, unit)
        self.per_address = _item(max(1, amount // ANONYMOUS_DIVISOR), unit)
        self.per_public_simulator_address = _item(*settings.simulator_public_rate_limit_parts)
        self.per_sign_in_address = _item(*settings.dashboard_sign_in_rate_limit_parts)
        self.per_link_pay = _item(*settings.payment_link_pay_rate_limit_parts)
        self.per_link_pay_address = _item(*settings.payment_link_pay_address_rate_limit_parts)
        self._shared = None if redis is None else _RedisWindows(redis)
        self._local = MemoryStorage()  # without Redis, or while it is skipped

    async def hit_application(self, application_id: str) -> Decision:
        return await self._hit(self.per_application, "app", application_id)

    async def hit_address(self, address: str) -> Decision:
        return await self._hit(self.per_address, "addr", address)

    async def hit_public_simulator(self, address: str) -> Decision:
        return await self._hit(self.per_public_simulator_address, "sim-public", address)

    async def hit_sign_in(self, address: str) -> Decision:
        """A dashboard sign-in attempt (payorch.dashboard.signin)."""
        return await self._hit(self.per_sign_in_address, "sign-in", address)

    async def hit_link_pay(self, link_id: str, address: str) -> Decision:
        """A buyer's "Pay" on a payment link (payorch.links.buyer_page): counted per link and per
        client address; refused when either is over (the first refusal is the one answered)."""
        per_link = await self._hit(self.per_link_pay, "link-pay", link_id)
        per_address = await self._hit(self.per_link_pay_address, "link-pay-addr", address)
        return per_link if not per_link.allowed else per_address

    async def _hit(self, item: RateLimitItem, kind: str, who: str) -> Decision:
        count, ends = await self._count(item.key_for(NAMESPACE, kind, who), item.get_expiry())
        reset = max(1, math.ceil(ends - time.time()))
        return Decision(count <= item.amount, item.amount, max(0, item.amount - count), reset)

    async def _count(self, key: str, expiry: int) -> tuple[int, float]:
        if self._shared is not None:
            try:
                return await self._shared.hit(key, expiry)
            except RedisUnavailable:
                pass  # counted in this process instead (see the module's docstring)
        count = await self._local.incr(key, expiry)
        return count, await self._local.get_expiry(key)
