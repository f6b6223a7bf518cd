"""The composition root: the one place that builds a Runtime and wires its ports.

Every process builds its Runtime here: the API (``serve_app``, uvicorn's factory), the worker
and tests. Tests pass their fakes (refund gateway, webhook resolver, provider health, an ASGI
app for in-process calls) as arguments; nothing is swapped on a Runtime after it is built.
"""

from __future__ import annotations

from fastapi import FastAPI

from payorch import heap
from payorch.app import create_app, create_in_process_app
from payorch.auth.service import Authenticator
from payorch.clock import Clock, SystemClock
from payorch.config import Settings, load_settings
from payorch.crypto import load_cipher
from payorch.db import Database, Phases
from payorch.db.bounds import Bounds
from payorch.db.replica import ReplicaSettings
from payorch.http.client import LocalApp, build_client
from payorch.idempotency.service import Idempotency
from payorch.logs import configure_logging
from payorch.observability import tracing
from payorch.observability.metrics import record_replica_fallback, set_replica_lag
from payorch.observability.traced_phases import TracedPhases
from payorch.payments.adapter_refund_gateway import ProviderRefundGateway
from payorch.payments.refund_gateway import RefundGateway
from payorch.provider_words.store import WordStores
from payorch.providers.contexts import ConnectorContexts
from payorch.providers.health import ProviderHealth, build_health
from payorch.ratelimit.limiter import RateLimiter
from payorch.redis_client import SharedRedis
from payorch.runtime import Runtime
from payorch.success_rates.build import build_success_rates
from payorch.webhooks.urls import Resolver


def build_runtime(
    settings: Settings,
    *,
    clock: Clock | None = None,
    database: Database | None = None,
    local_app: LocalApp | None = None,
    provider_health: ProviderHealth | None = None,
    refund_gateway: RefundGateway | None = None,
    webhook_resolver: Resolver | None = None,
) -> Runtime:
    """A process's Runtime. ``database`` given: the caller owns (and disposes of) it."""
    clock = clock or SystemClock()
    owns_database = database is None
    database = database or Database(
        settings.database_url,
        pool_size=settings.database_pool_size,
        replica=replica_settings(settings),
        bounds=Bounds(
            connect_seconds=settings.database_connect_timeout_seconds,
            statement_seconds=settings.database_statement_timeout_seconds,
            pool_seconds=settings.database_pool_timeout_seconds,
        ),
        transaction_pooling=settings.database_transaction_pooling,
    )
    cipher = load_cipher(settings)
    local_app = local_app or LocalApp()
    http = build_client(settings.public_url, local_app, settings.provider_timeout_seconds)
    # While tracing is on, each phase is a span; off, the phases are the plain ones (no check).
    phases = TracedPhases(database) if tracing.enabled else Phases(database)
    contexts = ConnectorContexts(
        cipher=cipher,
        http=http,
        clock=clock,
        public_url=settings.public_url,
        timeout_seconds=settings.provider_timeout_seconds,
        words=WordStores(phases, clock).of,
    )
    redis = (
        SharedRedis.from_url(
            settings.redis_url,
            settings.redis_timeout_seconds,
            settings.redis_retry_seconds,
            settings.redis_timeouts_to_skip,
        )
        if settings.redis_url
        else None
    )
    runtime = Runtime(
        settings=settings,
        clock=clock,
        database=database,
        phases=phases,
        cipher=cipher,
        authenticator=Authenticator(phases, clock),
        idempotency=Idempotency(phases, clock, settings.idempotency_ttl_seconds),
        local_app=local_app,
        http=http,
        connector_contexts=contexts,
        provider_health=provider_health
        or build_health(clock, redis, settings.provider_failure_threshold, settings.provider_skip_seconds),
        rate_limiter=RateLimiter(settings, redis),
        redis=redis,
        refund_gateway=refund_gateway or ProviderRefundGateway(contexts),
        webhook_resolver=webhook_resolver,
        owns_database=owns_database,
        success_rates=build_success_rates(clock, redis, settings),
    )
    # A process that serves no API (the worker) still calls the simulator in-process in MOCK
    # mode: it gets an app of its own on first use, unless create_app bound one before.
    local_app.fallback(lambda: create_in_process_app(runtime))
    return runtime


def replica_settings(settings: Settings) -> ReplicaSettings | None:
    """The read replica of PAYORCH_DATABASE_REPLICA_URL, its fallbacks and lag counted."""
    if settings.database_replica_url is None:
        return None
    return ReplicaSettings(
        url=settings.database_replica_url,
        max_lag_seconds=settings.replica_max_lag_seconds,
        check_seconds=settings.replica_check_seconds,
        timeout_seconds=settings.replica_timeout_seconds,
        on_fallback=record_replica_fallback,
        on_lag=set_replica_lag,
    )


def serve_app() -> FastAPI:
    """uvicorn's factory (``payorch serve``): settings from the environment."""
    configure_logging()
    tracing.configure()  # here, in each API process uvicorn started (docs/deployment.md, "Traces")
    app = create_app(build_runtime(load_settings()))
    heap.settle()
    return app
