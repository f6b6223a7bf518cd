"""HTTP of simulated provider A's payment page: the buyer's choice, and the way back to the shop.

The page carries no credentials: its token is the only key. The four ways back are the
protocol's (docs/simulator.md, "Provider A").
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import RedirectResponse, Response

from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.simulator import repository as shared
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.pages import no_outcome_chosen, render, unknown_link, with_query
from payorch.simulator.provider_a import service
from payorch.simulator.provider_a.records import SimATransaction

BASE = "/simulator/provider_a"
PAGE = BASE + "/webpayserver/initTransaction"
BRAND = "Provider A"

router = APIRouter(tags=["Simulator: provider A"], include_in_schema=False)


async def _merchant(conn: AsyncConnection, owner: str) -> str:
    if owner == PUBLIC_OWNER:
        return "Integration test shop"
    return await shared.merchant_name(conn, owner)


def _unknown() -> Response:
    return unknown_link("Unknown transaction", BRAND)


@router.api_route(PAGE, methods=["GET", "POST"])
async def payment_page(request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)
    token = await _field(request, "token_ws")
    transaction = await service.page_transaction(conn, token) if token else None
    if transaction is None:
        return _unknown()
    if transaction.outcome is not None:
        return _finished_page(transaction)
    return render(
        "provider_a/page.html",
        merchant=await _merchant(conn, transaction.owner),
        transaction=transaction,
        currency="CLP",
        expired=runtime.clock.now() > transaction.expires_at,
        response_codes=service.RESPONSE_CODES,
        expires_at=transaction.expires_at,
    )


@router.post(BASE + "/webpayserver/decide")
async def decide(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    form = await request.form()
    token = str(form.get("token_ws", ""))
    outcome = str(form.get("outcome", ""))
    if outcome not in service.OUTCOMES:
        return no_outcome_chosen(BRAND)
    code = str(form.get("response_code", "-1"))
    response_code = int(code) if code.lstrip("-").isdigit() else -1
    decided = await service.decide(conn, runtime.clock, token, outcome, response_code) if token else None
    if decided is None:
        return _unknown()
    if not decided.first:
        return _finished_page(decided.transaction)
    return send_back(decided.transaction)


def _finished_page(transaction: SimATransaction) -> Response:
    return render(
        "message.html",
        409,
        title="This payment is already finished",
        brand=BRAND,
        message="The result was already sent to the shop. You can go back to it.",
        back={
            "url": transaction.return_url,
            "method": "POST" if transaction.outcome == "cancel" else "GET",
            "fields": return_fields(transaction),
        },
    )


def return_fields(transaction: SimATransaction) -> dict[str, str]:
    """The four return shapes of the protocol."""
    token = transaction.token
    if transaction.outcome in ("approve", "reject"):
        return {"token_ws": token}
    if transaction.outcome == "timeout":
        return {"TBK_ORDEN_COMPRA": transaction.buy_order, "TBK_ID_SESION": transaction.session_id}
    if transaction.outcome == "cancel":
        return {
            "TBK_TOKEN": token,
            "TBK_ORDEN_COMPRA": transaction.buy_order,
            "TBK_ID_SESION": transaction.session_id,
        }
    return {"token_ws": token, "TBK_TOKEN": token}  # error page, then "back to shop"


def send_back(transaction: SimATransaction) -> Response:
    """Normal end, timeout and error come back by GET (303); an abort as a POSTed form."""
    fields = return_fields(transaction)
    if transaction.outcome == "cancel":
        return render("autopost.html", url=transaction.return_url, fields=fields, brand=BRAND)
    return RedirectResponse(with_query(transaction.return_url, fields), status_code=303)


async def _field(request: Request, name: str) -> str:
    if request.method == "POST":
        form = await request.form()
        return str(form.get(name, ""))
    return request.query_params.get(name, "")
