"""The ASGI applications: the API, and the provider simulator when enabled; and the smaller app
that in-process calls go to (MOCK connectors calling the simulator, the simulator notifying us).

Takes a built Runtime (payorch.composition builds it; ``serve_app`` there is uvicorn's factory).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from payorch import __version__
from payorch.activity.endpoints import router as activity_router
from payorch.applications.endpoints import router as merchant_accounts_router
from payorch.auth.endpoints import router as api_credentials_router
from payorch.checkouts.endpoints import cancel_router, notifications_router
from payorch.checkouts.endpoints import router as checkouts_router
from payorch.checkouts.retry_page import router as retry_page_router
from payorch.connectors.endpoints import router as connectors_router
from payorch.dashboard.routes import ROUTERS as DASHBOARD_ROUTERS
from payorch.events.endpoints import router as events_router
from payorch.exports.endpoints import router as exports_router
from payorch.http.context import RequestContextMiddleware
from payorch.http.detached import AwaitDetached
from payorch.http.direct_routes import DirectRoutes
from payorch.http.docs_pages import install_docs_pages
from payorch.http.errors import install_error_handlers
from payorch.http.openapi import install_openapi
from payorch.http.read_retry import RetryReadsOnLostConnection
from payorch.http.routing import mount
from payorch.intents.endpoints import router as intents_router
from payorch.links.buyer_page import router as buyer_page_router
from payorch.links.endpoints import router as links_router
from payorch.observability import tracing
from payorch.observability.endpoints import router as observability_router
from payorch.observability.middleware import MetricsMiddleware
from payorch.observability.tracing_middleware import TracingMiddleware
from payorch.payments.endpoints import router as payments_router
from payorch.payments.hold_endpoints import router as holds_router
from payorch.ratelimit.middleware import RateLimitMiddleware
from payorch.reconciliation.endpoints import router as reconciliation_router
from payorch.routing.endpoints import router as routing_router
from payorch.runtime import Runtime
from payorch.simulator.endpoints import CONTROLS_ROUTERS, PROVIDER_ROUTERS
from payorch.users import passwords
from payorch.users.endpoints import router as users_router
from payorch.webhooks.endpoints import router as webhooks_router


def create_app(runtime: Runtime) -> FastAPI:
    """Build the app over ``runtime``; closing the app (lifespan end) closes the runtime."""
    owned = runtime

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await asyncio.to_thread(passwords.prepare)
        yield
        await owned.close()

    app = FastAPI(
        title="payorch",
        version=__version__,
        summary="One payment API over several providers, with a sandbox simulator.",
        lifespan=lifespan,
        docs_url=None,  # served from local assets: install_docs_pages
        redoc_url=None,
        # FastAPI's own OpenTelemetry hooks, off: payorch's metrics are Prometheus
        # (observability/), and with them on every request asked OpenTelemetry for its providers.
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.state.runtime = runtime
    # In-process calls go to the in-process app of the first app built over the runtime.
    runtime.local_app.bind(create_in_process_app(runtime))
    install_error_handlers(app)
    install_openapi(app)
    install_docs_pages(app)
    # Routers are matched in this order, each route in turn: a payment's own requests first
    # (the buyer's pages at the simulator among them; no path of one router is another's). The
    # order of the API reference is that of the routers in it (the simulator's controls last).
    simulated = PROVIDER_ROUTERS if runtime.settings.simulator_enabled else ()
    mount(
        app,
        intents_router,
        cancel_router,
        checkouts_router,
        notifications_router,
        *simulated,
        payments_router,
        links_router,
        holds_router,
        reconciliation_router,
        exports_router,
        connectors_router,
        routing_router,
        webhooks_router,
        events_router,
        activity_router,
        api_credentials_router,
        users_router,
        merchant_accounts_router,
        observability_router,
        buyer_page_router,
        retry_page_router,
        *DASHBOARD_ROUTERS,
    )
    if runtime.settings.simulator_enabled:
        mount(app, *CONTROLS_ROUTERS)
    app.add_middleware(DirectRoutes, routes=app)  # innermost: plain routes called directly
    app.add_middleware(RetryReadsOnLostConnection)  # a retried read is counted once
    app.add_middleware(RateLimitMiddleware, runtime=runtime)  # inside the request context
    app.add_middleware(RequestContextMiddleware)
    app.add_middleware(MetricsMiddleware)  # also counts 413/415 rejections
    if tracing.enabled:  # outermost: the request's span covers everything (tracing.py)
        app.add_middleware(TracingMiddleware)
    app.add_middleware(AwaitDetached)  # outermost: the sends after an answer are not its time
    return app


def create_in_process_app(runtime: Runtime) -> FastAPI:
    """The app of in-process calls (http/client.py): a MOCK connector's calls to the simulator
    and the simulator's notifications to us. Only those routes, and no edge middleware (metrics,
    request log, rate limit): the client request that led to the call paid for the edge once,
    and each call would otherwise also be matched against every route of the API. Its plain
    routes (every provider's API and pages) are called directly (payorch.http.direct_routes)."""
    app = FastAPI(
        title="payorch in-process",
        version=__version__,
        openapi_url=None,
        docs_url=None,
        redoc_url=None,
        telemetry={"tracing": False, "metrics": False, "logs": False, "operation_spans": False},
    )
    app.state.runtime = runtime
    install_error_handlers(app)
    mount(app, notifications_router)
    if runtime.settings.simulator_enabled:
        mount(app, *PROVIDER_ROUTERS)
        mount(app, *CONTROLS_ROUTERS)  # a MOCK client may set faults in process
    app.add_middleware(DirectRoutes, routes=app)
    return app
