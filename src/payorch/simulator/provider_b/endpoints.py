"""HTTP of simulated provider B: the Checkout Pro API (Bearer access token) and the checkout page.

API answers use the provider's own bodies (``{"message", "error", "status", "cause"}``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from fastapi import APIRouter, Request
from starlette.background import BackgroundTask
from starlette.responses import RedirectResponse, Response

from payorch.http.deps import RuntimeDep
from payorch.http.responses import json_response
from payorch.runtime import Runtime
from payorch.simulator import repository as shared
from payorch.simulator.credentials import application_of
from payorch.simulator.faults import active_fault
from payorch.simulator.pages import render, with_query
from payorch.simulator.provider_b import notify, service
from payorch.simulator.provider_b.wire import WireError, parse_body

BASE = "/simulator/provider_b"
BRAND = "Provider B"

router = APIRouter(tags=["Simulator: provider B"], include_in_schema=False)

Operation = Callable[[str], Awaitable[tuple[int, Any]]]


async def _api(request: Request, runtime: Runtime, operation: Operation) -> Response:
    """Authenticate the Bearer access token, apply the owner's fault mode, run, answer."""
    authorization = request.headers.get("authorization", "")
    token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else ""
    owner = application_of(runtime.cipher, "provider_b", {"access_token": token})
    if owner is None:
        return json_response(WireError(401, "invalid access token", "unauthorized").body(), 401)
    fault = await active_fault(runtime, owner, "provider_b")
    if fault == "error":
        return json_response(
            WireError(500, "Internal server error", "internal_server_error").body(), 500
        )
    if fault == "timeout":
        return json_response(WireError(504, "Gateway timeout", "gateway_timeout").body(), 504)
    try:
        status, body = await operation(owner)
    except WireError as error:
        return json_response(error.body(), error.status)
    return json_response(body, status)


@router.post(BASE + "/checkout/preferences")
@router.post(BASE + "/checkout/preferences/")
async def create_preference(request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()

    async def run(owner: str) -> tuple[int, Any]:
        return 201, await service.create_preference(runtime, owner, parse_body(raw))

    return await _api(request, runtime, run)


@router.get(BASE + "/checkout/preferences/{preference_id}")
async def read_preference(preference_id: str, request: Request, runtime: RuntimeDep) -> Response:
    async def run(owner: str) -> tuple[int, Any]:
        return 200, await service.get_preference(runtime, owner, preference_id)

    return await _api(request, runtime, run)


@router.put(BASE + "/checkout/preferences/{preference_id}")
async def update_preference(preference_id: str, request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()

    async def run(owner: str) -> tuple[int, Any]:
        return 200, await service.update_preference(runtime, owner, preference_id, parse_body(raw))

    return await _api(request, runtime, run)


@router.get(BASE + "/v1/payments/search")
async def search_payments(request: Request, runtime: RuntimeDep) -> Response:
    params = dict(request.query_params)

    async def run(owner: str) -> tuple[int, Any]:
        return 200, await service.search_payments(runtime, owner, params)

    return await _api(request, runtime, run)


@router.get(BASE + "/v1/payments/{payment_id}")
async def read_payment(payment_id: str, request: Request, runtime: RuntimeDep) -> Response:
    async def run(owner: str) -> tuple[int, Any]:
        return 200, await service.get_payment(runtime, owner, payment_id)

    return await _api(request, runtime, run)


@router.put(BASE + "/v1/payments/{payment_id}")
async def update_payment(payment_id: str, request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()

    async def run(owner: str) -> tuple[int, Any]:
        return 200, await service.update_payment(runtime, owner, payment_id, parse_body(raw))

    return await _api(request, runtime, run)


@router.post(BASE + "/v1/payments/{payment_id}/refunds")
async def refund_payment(payment_id: str, request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()
    key = request.headers.get("x-idempotency-key")

    async def run(owner: str) -> tuple[int, Any]:
        result = await service.refund(runtime, owner, payment_id, parse_body(raw), key)
        return 201, result.body

    return await _api(request, runtime, run)


@router.get(BASE + "/v1/payments/{payment_id}/refunds")
async def list_refunds(payment_id: str, request: Request, runtime: RuntimeDep) -> Response:
    async def run(owner: str) -> tuple[int, Any]:
        return 200, await service.list_refunds(runtime, owner, payment_id)

    return await _api(request, runtime, run)


# ----- the buyer's page ---------------------------------------------------------------------------

_UNKNOWN: dict[str, Any] = {
    "title": "Unknown checkout",
    "brand": BRAND,
    "message": "This payment link is not valid. Go back to the shop and start the payment again.",
}


@router.get(BASE + "/checkout/v1/redirect")
async def checkout_page(request: Request, runtime: RuntimeDep) -> Response:
    state = await service.page_state(runtime, request.query_params.get("pref_id", ""))
    if state is None:
        return render("message.html", 404, **_UNKNOWN)
    preference = state.preference
    async with runtime.database.transaction() as conn:
        merchant = await shared.merchant_name(conn, preference.owner) or "Sandbox shop"
    if state.settled is not None:
        return _settled_page(preference, state.settled)
    return render(
        "provider_b.html",
        merchant=merchant,
        preference=preference,
        items=preference.body.get("items", []),
        total=Decimal(preference.amount_hundredths) / 100,
        currency=preference.currency_id,
        expired=service.is_expired(preference, runtime.clock.now()),
        rejected=any(p.status == "rejected" for p in state.payments),
    )


@router.post(BASE + "/checkout/v1/redirect")
async def choose(request: Request, runtime: RuntimeDep) -> Response:
    form = await request.form()
    outcome = str(form.get("outcome", ""))
    if outcome not in service.OUTCOMES:
        return render(
            "message.html",
            400,
            title="Choose an outcome",
            brand=BRAND,
            message="Go back and press one of the buttons.",
        )
    choice = await service.choose(runtime, str(form.get("pref_id", "")), outcome)
    if choice is None:
        return render("message.html", 404, **_UNKNOWN)
    preference = choice.state.preference
    if choice.outcome == "settled":
        return _settled_page(preference, choice.payment)
    task = (
        BackgroundTask(notify.deliver_now, runtime, choice.notifications)
        if choice.notifications
        else None
    )
    url = service.back_url(preference, choice.payment)
    if url is None:
        return render(
            "message.html",
            200,
            title="Payment finished",
            brand=BRAND,
            background=task,
            message="The shop gave no address to return to. You can close this window.",
        )
    target = with_query(url, service.back_params(preference, choice.payment))
    return RedirectResponse(target, status_code=303, background=task)


def _settled_page(preference: Any, payment: Any) -> Response:
    url = service.back_url(preference, payment)
    back = None
    if url is not None:
        back = {"url": url, "method": "GET", "fields": service.back_params(preference, payment)}
    return render(
        "message.html",
        409,
        title="This checkout is already paid",
        brand=BRAND,
        message=f"Payment {payment.id} is {payment.status.replace('_', ' ')}. Nothing left to pay.",
        back=back,
    )
