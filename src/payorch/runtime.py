"""What a process holds for its whole life: settings, clock, database, cipher and shared services.

Built in one place, ``payorch.composition.build_runtime`` (the API's app factory, the worker,
tests), with every port typed and given at construction; nothing reassigns a field afterwards.
Domain code receives the pieces it needs, never a global.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx

from payorch.auth.service import Authenticator
from payorch.clock import Clock
from payorch.config import Settings
from payorch.crypto import Cipher
from payorch.db import Database, Phases
from payorch.detached import Detached
from payorch.exports.slots import ExportSlots
from payorch.http.client import LocalApp
from payorch.idempotency.service import Idempotency
from payorch.payments.refund_gateway import RefundGateway
from payorch.providers.contexts import ConnectorContexts
from payorch.providers.health import ProviderHealth
from payorch.ratelimit.limiter import RateLimiter
from payorch.redis_client import SharedRedis
from payorch.routing.strategy import PriorityFallback, SuccessRates
from payorch.webhooks.urls import Resolver


@dataclass(frozen=True, slots=True)
class Runtime:
    settings: Settings
    clock: Clock
    database: Database
    # The phases of multi-phase flows and one-statement writes (db/engine.py), one per process.
    phases: Phases
    cipher: Cipher
    authenticator: Authenticator
    idempotency: Idempotency
    # The ASGI app of this process, for in-process calls to our own routes (http/client.py).
    local_app: LocalApp
    # The pooled outgoing client (provider calls, simulator notifications).
    http: httpx.AsyncClient
    # Builds each adapter call's context (base URL, MOCK credentials): providers/contexts.py.
    connector_contexts: ConnectorContexts
    # Provider health (providers/health.py): in-process, or shared through PAYORCH_REDIS_URL.
    provider_health: ProviderHealth
    # Rate limits (ratelimit/limiter.py): one limiter and storage per process, for the API's
    # middleware and the simulator's public keys alike.
    rate_limiter: RateLimiter
    # The one Redis client and circuit of the process (redis_client.py), used by the two above;
    # None without PAYORCH_REDIS_URL.
    redis: SharedRedis | None
    # Refunds reach the providers through this port (payments/refund_gateway.py).
    refund_gateway: RefundGateway
    # How host names of webhook URLs are resolved (None: the event loop's getaddrinfo).
    webhook_resolver: Resolver | None
    owns_database: bool
    # Ranks providers for routing's success-rate default (routing/strategy.py).
    success_rates: SuccessRates = field(default_factory=PriorityFallback)
    # How many exports each application streams at once in this process (exports/slots.py).
    export_slots: ExportSlots = field(default_factory=ExportSlots)
    # Work no caller waits for (the simulator's notifications): detached.py.
    detached: Detached = field(default_factory=Detached)

    async def close(self) -> None:
        await self.detached.close(grace_seconds=5.0)  # its work needs the client and the database
        await self.authenticator.drain()  # its last-use writes need the database
        await self.provider_health.aclose()
        if self.redis is not None:
            await self.redis.aclose()
        await self.http.aclose()
        if self.owns_database:
            await self.database.dispose()
