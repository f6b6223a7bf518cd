"""The shop's web app (Starlette + Jinja2): product page, pay, return page, webhook receiver."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from payorch.client import AsyncPayorchClient, PayorchError, ServiceUnavailableError

from . import webhooks
from .catalog import AUTO, AUTO_LABEL, PRODUCTS, clp
from .config import ShopConfig
from .payments import refresh_from_intent, start_checkout
from .store import Order, Store

log = logging.getLogger("shop")
templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
templates.env.filters["clp"] = clp


def _state(request: Request) -> tuple[ShopConfig, Store, AsyncPayorchClient]:
    state = request.app.state
    return state.config, state.store, state.client


async def payment_methods(config: ShopConfig, client: AsyncPayorchClient) -> dict[str, str]:
    """``auto`` and every provider this merchant has enabled in payorch, best priority first
    (value: label). Only ``auto`` while payorch cannot be asked."""
    try:
        connectors = await client.list_connectors(config.merchant_id)
    except PayorchError:
        log.warning("payorch unavailable: offering only %s", AUTO)
        connectors = []
    return {AUTO: AUTO_LABEL, **{c.provider: c.provider for c in connectors if c.enabled}}


async def products(request: Request) -> Response:
    config, _, client = _state(request)
    methods = await payment_methods(config, client)
    return templates.TemplateResponse(
        request, "products.html", {"products": PRODUCTS.values(), "providers": methods}
    )


async def create_order(request: Request) -> Response:
    config, store, client = _state(request)
    form = await request.form()
    product = PRODUCTS.get(str(form.get("product_id", "")))
    provider = str(form.get("provider", AUTO))
    if product is None or provider not in await payment_methods(config, client):
        return templates.TemplateResponse(
            request, "error.html", {"message": "Unknown product or payment method."}, status_code=400
        )
    order = await store.create_order(product.id, product.price, product.currency, provider)
    return await _pay(request, order)


async def pay_order(request: Request) -> Response:
    """Try again for an order whose first attempt failed (same idempotency keys)."""
    _, store, _ = _state(request)
    order = await store.get_order(request.path_params["order_id"])
    if order is None:
        return templates.TemplateResponse(
            request, "error.html", {"message": "No such order."}, status_code=404
        )
    if order.status not in ("NEW", "PENDING"):
        return RedirectResponse(f"/orders/{order.id}/return", status_code=303)
    return await _pay(request, order)


async def _pay(request: Request, order: Order) -> Response:
    config, store, client = _state(request)
    try:
        checkout = await start_checkout(client, config, store, order)
    except PayorchError as error:
        log.warning("checkout for %s failed: %s", order.id, error)
        status = 503 if isinstance(error, ServiceUnavailableError) else 502
        return templates.TemplateResponse(
            request,
            "error.html",
            {"message": "The payment could not be started.", "error": error, "order": order},
            status_code=status,
        )
    if checkout.method == "POST":
        # The buyer's browser must POST the fields itself: an auto-submitting form.
        return templates.TemplateResponse(request, "redirect_form.html", {"checkout": checkout})
    return RedirectResponse(checkout.url, status_code=303)


async def order_return(request: Request) -> Response:
    """The intent's return_url. Query parameters are ignored on purpose: anyone can type them.
    The order is ours (looked up by its id in the path) and its status comes from payorch."""
    config, store, client = _state(request)
    order = await store.get_order(request.path_params["order_id"])
    if order is None:
        return templates.TemplateResponse(
            request, "error.html", {"message": "No such order."}, status_code=404
        )
    intent_status, error = None, None
    if order.payment_intent_id is not None:
        try:
            intent_status = await refresh_from_intent(client, store, order)
        except PayorchError as exc:
            error = exc  # show what we knew; the page refreshes itself
        order = await store.get_order(order.id) or order
    return templates.TemplateResponse(
        request,
        "order.html",
        {
            "order": order,
            "product": PRODUCTS[order.product_id],
            "intent_status": intent_status,
            "error": error,
            "events": await store.events_for(order.payment_intent_id or ""),
        },
    )


async def order_json(request: Request) -> Response:
    """The stored order and the webhook events received for it (for tests and support)."""
    _, store, _ = _state(request)
    order = await store.get_order(request.path_params["order_id"])
    if order is None:
        return JSONResponse({"error": "not found"}, status_code=404)
    events = await store.events_for(order.payment_intent_id or "")
    return JSONResponse({"order": vars(order), "webhook_events": [vars(e) for e in events]})


def create_app(config: ShopConfig | None = None) -> Starlette:
    config = config or ShopConfig.from_env()

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.config = config
        app.state.store = await Store.open(config.database)
        async with AsyncPayorchClient(config.api_key, config.payorch_url) as client:
            app.state.client = client
            try:
                yield
            finally:
                await app.state.store.close()

    routes = [
        Route("/", products),
        Route("/orders", create_order, methods=["POST"]),
        Route("/orders/{order_id}/pay", pay_order, methods=["POST"]),
        Route("/orders/{order_id}/return", order_return),
        Route("/orders/{order_id}.json", order_json),
        Route("/webhooks/payorch", webhooks.receive, methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)
