"""HTTP of simulated provider B's Checkout Pro API (Bearer access token); the page: page.py.

API answers use the provider's own bodies (``{"message", "error", "status", "cause"}``).
Each call runs in simulator/api.py's wrapper; a refund's X-Idempotency-Key answers a retry
with the refund it made, and 409 for another payment's refund under the same key.
"""

from __future__ import annotations

from dataclasses import replace

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.simulator.api import Answer, ProviderApi, Refusals, Replays
from payorch.simulator.provider_b import payments, preferences
from payorch.simulator.provider_b.credentials import owner_of
from payorch.simulator.provider_b.render import (
    merchant_order_body,
    preference_body,
    refund_body,
    search_body,
    with_refunds_body,
)
from payorch.simulator.provider_b.wire import BASE, SimBWireError, parse_body

router = APIRouter(tags=["Simulator: provider B"], include_in_schema=False)


def _access_token(request: Request) -> dict[str, str]:
    authorization = request.headers.get("authorization", "")
    token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else ""
    return {"access_token": token}


API = ProviderApi(
    name="provider_b",
    credentials=_access_token,
    owner_of=owner_of,
    refusals=Refusals(
        unauthorized=SimBWireError(401, "invalid access token", "unauthorized").body(),
        too_many=SimBWireError(429, "Too Many Requests", "too_many_requests").body(),
        failed=SimBWireError(500, "Internal server error", "internal_server_error").body(),
        timed_out=SimBWireError(504, "Gateway timeout", "gateway_timeout").body(),
    ),
    refused=SimBWireError,
    refusal=lambda error: (error.status, error.body()),
)
# A refund's key names one refund of one payment: the path alone makes a retry the same request.
REFUNDS_API = replace(
    API,
    replays=Replays(
        header="x-idempotency-key",
        conflict=SimBWireError(409, "X-Idempotency-Key already used for another request", "conflict").body(),
        compares_body=False,
    ),
)


@router.post(BASE + "/checkout/preferences")
@router.post(BASE + "/checkout/preferences/")
async def create_preference(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> Answer:
        made = await preferences.create_preference(conn, runtime.clock, owner, parse_body(raw))
        return Answer(preference_body(made, runtime.settings.public_url), 201)

    return await API.answer(request, conn, run)


@router.get(BASE + "/checkout/preferences/{preference_id}")
async def read_preference(preference_id: str, request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        found = await preferences.get_preference(conn, owner, preference_id)
        return Answer(preference_body(found, runtime.settings.public_url))

    return await API.answer(request, conn, run)


@router.put(BASE + "/checkout/preferences/{preference_id}")
async def update_preference(preference_id: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> Answer:
        updated = await preferences.update_preference(conn, owner, preference_id, parse_body(raw))
        return Answer(preference_body(updated, runtime.settings.public_url))

    return await API.answer(request, conn, run)


@router.get(BASE + "/v1/payments/search")
async def search_payments(request: Request, conn: ReadConn) -> Response:
    params = dict(request.query_params)

    async def run(owner: str) -> Answer:
        return Answer(search_body(await payments.search_payments(conn, owner, params)))

    return await API.answer(request, conn, run)


@router.get(BASE + "/v1/payments/{payment_id}")
async def read_payment(payment_id: str, request: Request, conn: ReadConn) -> Response:

    async def run(owner: str) -> Answer:
        return Answer(with_refunds_body(await payments.get_payment(conn, owner, payment_id)))

    return await API.answer(request, conn, run)


@router.get(BASE + "/merchant_orders/{merchant_order_id}")
async def read_merchant_order(merchant_order_id: str, request: Request, conn: ReadConn) -> Response:

    async def run(owner: str) -> Answer:
        number, found = await payments.merchant_order(conn, owner, merchant_order_id)
        return Answer(merchant_order_body(number, found))

    return await API.answer(request, conn, run)


@router.put(BASE + "/v1/payments/{payment_id}")
async def update_payment(payment_id: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> Answer:
        cancelled = await payments.cancel_payment(conn, runtime.clock, owner, payment_id, parse_body(raw))
        return Answer(with_refunds_body(cancelled))

    return await API.answer(request, conn, run)


@router.post(BASE + "/v1/payments/{payment_id}/refunds")
async def refund_payment(payment_id: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()
    key = request.headers.get("x-idempotency-key")

    async def run(owner: str) -> Answer:
        made = await payments.refund(conn, runtime.clock, owner, payment_id, parse_body(raw), key)
        return Answer(refund_body(made), 201)

    return await REFUNDS_API.answer(request, conn, run)


@router.get(BASE + "/v1/payments/{payment_id}/refunds")
async def list_refunds(payment_id: str, request: Request, conn: ReadConn) -> Response:

    async def run(owner: str) -> Answer:
        return Answer([refund_body(r) for r in await payments.list_refunds(conn, owner, payment_id)])

    return await API.answer(request, conn, run)
