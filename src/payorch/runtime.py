"""What a process holds for its whole life: settings, clock, database, cipher and shared services.

Built once by ``create_app`` (API) or ``payorch worker``; tests build it with their own clock
and database. Domain code receives the pieces it needs, never a global.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from payorch.auth.service import Authenticator
from payorch.clock import Clock, SystemClock
from payorch.config import Settings
from payorch.crypto import Cipher, load_cipher
from payorch.db import Database, Phases
from payorch.http.client import build_client
from payorch.idempotency.service import Idempotency

if TYPE_CHECKING:
    from payorch.providers.health import ProviderHealth
    from payorch.ratelimit.limiter import RateLimiter


@dataclass
class Runtime:
    settings: Settings
    clock: Clock
    database: Database
    cipher: Cipher
    authenticator: Authenticator
    idempotency: Idempotency
    owns_database: bool = field(default=True)
    # The ASGI app of this process, for in-process calls to our own routes (http/client.py).
    # Set by create_app; a worker builds one on first use.
    app: Any = field(default=None)
    _http: httpx.AsyncClient | None = field(default=None)
    # Webhooks: how host names of webhook URLs are resolved (None: the event loop's
    # getaddrinfo). Tests inject a fake to judge names that resolve to private addresses.
    webhook_resolver: Any = field(default=None)

    @property
    def http(self) -> httpx.AsyncClient:
        """The pooled outgoing client (provider calls, simulator notifications)."""
        if self._http is None:
            self._http = build_client(
                self.settings.public_url, self._asgi_app, self.settings.provider_timeout_seconds
            )
        return self._http

    def _asgi_app(self) -> Any:
        if self.app is None:
            from payorch.app import create_app

            self.app = create_app(runtime=self)
        return self.app

    @classmethod
    def build(
        cls, settings: Settings, *, clock: Clock | None = None, database: Database | None = None
    ) -> Runtime:
        clock = clock or SystemClock()
        owns = database is None
        database = database or Database(settings.database_url)
        return cls(
            settings=settings,
            clock=clock,
            database=database,
            cipher=load_cipher(settings),
            authenticator=Authenticator(Phases(database)),
            idempotency=Idempotency(database, clock, settings.idempotency_ttl_seconds),
            owns_database=owns,
        )

    async def close(self) -> None:
        if self._provider_health is not None:
            await self._provider_health.aclose()
            self._provider_health = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self.owns_database:
            await self.database.dispose()

    # Provider health (providers/health.py): in-process, or shared through PAYORCH_REDIS_URL.
    _provider_health: ProviderHealth | None = field(default=None)

    @property
    def provider_health(self) -> ProviderHealth:
        if self._provider_health is None:
            from payorch.providers.health import build_health

            self._provider_health = build_health(
                self.clock,
                self.settings.redis_url,
                self.settings.provider_failure_threshold,
                self.settings.provider_skip_seconds,
            )
        health: ProviderHealth = self._provider_health
        return health

    # Rate limits (ratelimit/limiter.py): one limiter and storage per process, for the API's
    # middleware and the simulator's public keys alike.
    _rate_limiter: RateLimiter | None = field(default=None)

    @property
    def rate_limiter(self) -> RateLimiter:
        if self._rate_limiter is None:
            from payorch.ratelimit.limiter import RateLimiter

            self._rate_limiter = RateLimiter(self.settings)
        limiter: RateLimiter = self._rate_limiter
        return limiter

    # Refunds reach the providers through this seam (payments/refund_gateway.py); None = the default
    # gateway over the provider adapters. Tests inject a fake.
    refund_gateway: Any = field(default=None)
