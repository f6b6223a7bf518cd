"""Who is counted, against which limit, in which storage.

- A request with a valid API key counts against its application: PAYORCH_RATE_LIMIT
  (default 100/second), shared by all the application's keys.
- A request without a valid key (missing, malformed, unknown, revoked) counts against its
  client address, with a tenth of that limit (at least 1): guessing keys stays slow.

- A write to simulated provider A with its published integration keys (the simulator's
  shared "public" owner: anyone may present them) counts against its client address:
  PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT (default 30/minute), checked by the simulator itself.

Fixed windows (the ``limits`` fixed-window rule: a counter per window, allowed while the count
is within the limit). O(1) per request: one increment; the window's end is read once per window
and remembered here, so with Redis a request costs one round trip. Memory storage per process
by default; with PAYORCH_REDIS_URL the counters live in Redis and every replica shares them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, RateLimitItemPerMinute, RateLimitItemPerSecond
from limits.aio.storage import MemoryStorage, Storage
from limits.storage import storage_from_string

from payorch.config import Settings

ANONYMOUS_DIVISOR = 10
NAMESPACE = "payorch"
MAX_REMEMBERED_WINDOWS = 100_000


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


def build_storage(settings: Settings) -> Storage:
    if settings.redis_url:
        # redis-py (also used for provider health) rather than the default coredis client.
        storage = storage_from_string("async+" + settings.redis_url, implementation="redispy")
        if not isinstance(storage, Storage):  # an "async+" URL always builds an async storage
            raise TypeError(f"not an async rate-limit storage: {type(storage).__name__}")
        return storage
    return MemoryStorage()


class RateLimiter:
    def __init__(self, settings: Settings, storage: Storage | None = None) -> None:
        amount, unit = settings.rate_limit_parts
        self.per_application = _item(amount, unit)
        self.per_address = _item(max(1, amount // ANONYMOUS_DIVISOR), unit)
        self.per_public_simulator_address = _item(*settings.simulator_public_rate_limit_parts)
        self.per_sign_in_address = _item(*settings.dashboard_sign_in_rate_limit_parts)
        self._storage = storage or build_storage(settings)
        self._window_ends: dict[str, float] = {}  # key -> when its current window ends

    async def hit_application(self, application_id: str) -> Decision:
        return await self._hit(self.per_application, "app", application_id)

    async def hit_address(self, address: str) -> Decision:
        return await self._hit(self.per_address, "addr", address)

    async def hit_public_simulator(self, address: str) -> Decision:
        return await self._hit(self.per_public_simulator_address, "sim-public", address)

    async def hit_sign_in(self, address: str) -> Decision:
        """A dashboard sign-in attempt (payorch.dashboard.signin)."""
        return await self._hit(self.per_sign_in_address, "sign-in", address)

    async def _hit(self, item: RateLimitItem, kind: str, who: str) -> Decision:
        key = item.key_for(NAMESPACE, kind, who)
        count = await self._storage.incr(key, item.get_expiry())
        now = time.time()
        ends = self._window_ends.get(key)
        if ends is None or ends <= now or count == 1:  # a new window (ours or another replica's)
            ends = await self._storage.get_expiry(key)
            if len(self._window_ends) >= MAX_REMEMBERED_WINDOWS:
                self._window_ends.clear()
            self._window_ends[key] = ends
        reset = max(1, math.ceil(ends - now))
        return Decision(count <= item.amount, item.amount, max(0, item.amount - count), reset)
