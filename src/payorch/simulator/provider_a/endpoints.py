"""HTTP of simulated provider A: the Webpay Plus REST 1.2 API and the payment page.

API answers use the provider's own bodies (``{"error_message": ...}``), never ours.
Writes with the provider's published integration keys (anyone has them) are limited per
client address (PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT); their rows are purged after a day
(simulator/jobs.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from payorch.db import Database
from payorch.http.deps import RuntimeDep
from payorch.http.responses import json_response
from payorch.ratelimit.limiter import client_address
from payorch.simulator import repository as shared
from payorch.simulator.credentials import PUBLIC_OWNER, application_of
from payorch.simulator.faults import active_fault
from payorch.simulator.pages import render, with_query
from payorch.simulator.provider_a import service
from payorch.simulator.provider_a.wire import WireError, parse_create, parse_object, parse_refund

BASE = "/simulator/provider_a"
API = BASE + "/rswebpaytransaction/api/webpay/v1.2/transactions"
PAGE = BASE + "/webpayserver/initTransaction"
UNKNOWN_MESSAGE = "This payment link is not valid. Go back to the shop and start the payment again."

log = logging.getLogger("payorch.simulator")
router = APIRouter(tags=["Simulator: provider A"], include_in_schema=False)


async def _api(
    request: Request, runtime: Any, operation: Callable[[str], Awaitable[dict[str, Any]]]
) -> Response:
    """Authenticate by the Tbk-Api-Key headers, apply the owner's fault mode, run, answer."""
    owner = application_of(
        runtime.cipher,
        "provider_a",
        {
            "commerce_code": request.headers.get("tbk-api-key-id", ""),
            "api_key": request.headers.get("tbk-api-key-secret", ""),
        },
    )
    if owner is None:
        return json_response({"error_message": "Not Authorized"}, 401)
    if owner == PUBLIC_OWNER and request.method != "GET":
        refused = await _public_write_refused(request, runtime)
        if refused is not None:
            return refused
    fault = await active_fault(runtime, owner, "provider_a")
    if fault == "error":
        return json_response({"error_message": "Internal Server Error"}, 500)
    if fault == "timeout":
        return json_response({"error_message": "Gateway Timeout"}, 504)
    try:
        return json_response(await operation(owner))
    except WireError as error:
        return json_response(error.body(), error.status)


async def _public_write_refused(request: Request, runtime: Any) -> Response | None:
    """A 429 in the provider's style once this address used up its budget of public writes."""
    try:
        decision = await runtime.rate_limiter.hit_public_simulator(client_address(request.scope))
    except Exception:  # the limiter's storage is down: serve, as the API's middleware does
        log.exception("rate limiter unavailable; public simulator write not counted")
        return None
    if decision.allowed:
        return None
    return json_response(
        {"error_message": "Too Many Requests"},
        429,
        {"Retry-After": str(decision.reset_seconds)},
    )


@router.post(API)
@router.post(API + "/")  # the official SDK posts to ".../transactions/"
async def create_transaction(request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()
    public_url = runtime.settings.public_url

    async def run(owner: str) -> dict[str, Any]:
        fields = parse_create(raw)
        token = await service.create(runtime.database, runtime.clock, owner, fields)
        return {"token": token, "url": public_url + PAGE}

    return await _api(request, runtime, run)


@router.put(API + "/{token}")
async def commit_transaction(token: str, request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()

    async def run(owner: str) -> dict[str, Any]:
        parse_object(raw, ())  # commit takes no fields
        return await service.commit(runtime.database, runtime.clock, owner, token)

    return await _api(request, runtime, run)


@router.get(API + "/{token}")
async def transaction_status(token: str, request: Request, runtime: RuntimeDep) -> Response:
    async def run(owner: str) -> dict[str, Any]:
        return await service.status(runtime.database, runtime.clock, owner, token)

    return await _api(request, runtime, run)


@router.post(API + "/{token}/refunds")
async def refund_transaction(token: str, request: Request, runtime: RuntimeDep) -> Response:
    raw = await request.body()

    async def run(owner: str) -> dict[str, Any]:
        amount = parse_refund(raw)
        return await service.refund(runtime.database, runtime.clock, owner, token, amount)

    return await _api(request, runtime, run)


# ----- the buyer's page -------------------------------------------------------------------------


async def _merchant(db: Database, owner: str) -> str:
    if owner == PUBLIC_OWNER:
        return "Integration test shop"
    async with db.transaction() as conn:
        return await shared.merchant_name(conn, owner) or "Sandbox shop"


@router.api_route(PAGE, methods=["GET", "POST"])
async def payment_page(request: Request, runtime: RuntimeDep) -> Response:
    token = await _field(request, "token_ws")
    row = await service.page_row(runtime.database, token) if token else None
    if row is None:
        return render(
            "message.html",
            404,
            title="Unknown transaction",
            brand="Provider A",
            message=UNKNOWN_MESSAGE,
        )
    if row.outcome is not None:
        return _finished_page(row)
    expired = runtime.clock.now() > service.expires_at(row)
    return render(
        "provider_a.html",
        merchant=await _merchant(runtime.database, row.owner),
        row=row,
        currency="CLP",
        expired=expired,
        expires_at=service.expires_at(row),
    )


@router.post(BASE + "/webpayserver/decide")
async def decide(request: Request, runtime: RuntimeDep) -> Response:
    form = await request.form()
    token = str(form.get("token_ws", ""))
    outcome = str(form.get("outcome", ""))
    if outcome not in service.OUTCOMES:
        return render(
            "message.html",
            400,
            title="Choose an outcome",
            brand="Provider A",
            message="Go back and press one of the buttons.",
        )
    decided = (
        await service.decide(runtime.database, runtime.clock, token, outcome) if token else None
    )
    if decided is None:
        return render(
            "message.html",
            404,
            title="Unknown transaction",
            brand="Provider A",
            message=UNKNOWN_MESSAGE,
        )
    if not decided.first:
        return _finished_page(decided.row)
    return send_back(decided.row)


def _finished_page(row: Any) -> Response:
    fields = return_fields(row)
    return render(
        "message.html",
        409,
        title="This payment is already finished",
        brand="Provider A",
        message="The result was already sent to the shop. You can go back to it.",
        back={
            "url": row.return_url,
            "method": "POST" if row.outcome == "cancel" else "GET",
            "fields": fields,
        },
    )


def return_fields(row: Any) -> dict[str, str]:
    """The four return shapes of the protocol."""
    if row.outcome in ("approve", "reject"):
        return {"token_ws": row.token}
    if row.outcome == "timeout":
        return {"TBK_ORDEN_COMPRA": row.buy_order, "TBK_ID_SESION": row.session_id}
    if row.outcome == "cancel":
        return {
            "TBK_TOKEN": row.token,
            "TBK_ORDEN_COMPRA": row.buy_order,
            "TBK_ID_SESION": row.session_id,
        }
    return {"token_ws": row.token, "TBK_TOKEN": row.token}  # error page, then "back to shop"


def send_back(row: Any) -> Response:
    """Normal end, timeout and error come back by GET (303); an abort as a POSTed form."""
    fields = return_fields(row)
    if row.outcome == "cancel":
        return render("autopost.html", url=row.return_url, fields=fields, brand="Provider A")
    return RedirectResponse(with_query(row.return_url, fields), status_code=303)


async def _field(request: Request, name: str) -> str:
    if request.method == "POST":
        form = await request.form()
        return str(form.get(name, ""))
    return request.query_params.get(name, "")
