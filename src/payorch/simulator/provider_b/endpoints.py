"""HTTP of simulated provider B's Checkout Pro API (Bearer access token); the page: page.py.

API answers use the provider's own bodies (``{"message", "error", "status", "cause"}``).
Each call runs in the request's transaction.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.http.responses import json_response
from payorch.jsontypes import JsonObject
from payorch.runtime import Runtime
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.faults import active_fault, timeout_answer
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
from payorch.simulator.public import public_write_refused

router = APIRouter(tags=["Simulator: provider B"], include_in_schema=False)

WireBody = JsonObject | list[JsonObject]
Operation = Callable[[str], Awaitable[tuple[int, WireBody]]]


async def _api(
    request: Request, runtime: Runtime, conn: AsyncConnection, operation: Operation
) -> Response:
    """Authenticate the Bearer access token, apply the owner's fault mode, run, answer."""
    authorization = request.headers.get("authorization", "")
    token = authorization[7:].strip() if authorization.lower().startswith("bearer ") else ""
    owner = owner_of(runtime.cipher, {"access_token": token})
    if owner is None:
        return json_response(
            SimBWireError(401, "invalid access token", "unauthorized").body(), 401
        )
    if owner == PUBLIC_OWNER and request.method != "GET":
        too_many = SimBWireError(429, "Too Many Requests", "too_many_requests").body()
        refused = await public_write_refused(request, runtime, too_many)
        if refused is not None:
            return refused
    fault = await active_fault(conn, owner, "provider_b")
    if fault == "error":
        return json_response(
            SimBWireError(500, "Internal server error", "internal_server_error").body(), 500
        )
    if fault == "timeout":
        body = SimBWireError(504, "Gateway timeout", "gateway_timeout").body()
        return timeout_answer(body, runtime.settings.provider_timeout_seconds)
    try:
        status, answer = await operation(owner)
    except SimBWireError as error:
        await conn.rollback()  # a refused call applies nothing
        return json_response(error.body(), error.status)
    return json_response(answer, status)


@router.post(BASE + "/checkout/preferences")
@router.post(BASE + "/checkout/preferences/")
async def create_preference(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> tuple[int, WireBody]:
        made = await preferences.create_preference(conn, runtime.clock, owner, parse_body(raw))
        return 201, preference_body(made, runtime.settings.public_url)

    return await _api(request, runtime, conn, run)


@router.get(BASE + "/checkout/preferences/{preference_id}")
async def read_preference(
    preference_id: str, request: Request, conn: ReadConn
) -> Response:
    runtime = runtime_of(request)
    async def run(owner: str) -> tuple[int, WireBody]:
        found = await preferences.get_preference(conn, owner, preference_id)
        return 200, preference_body(found, runtime.settings.public_url)

    return await _api(request, runtime, conn, run)


@router.put(BASE + "/checkout/preferences/{preference_id}")
async def update_preference(
    preference_id: str, request: Request, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> tuple[int, WireBody]:
        updated = await preferences.update_preference(conn, owner, preference_id, parse_body(raw))
        return 200, preference_body(updated, runtime.settings.public_url)

    return await _api(request, runtime, conn, run)


@router.get(BASE + "/v1/payments/search")
async def search_payments(request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)
    params = dict(request.query_params)

    async def run(owner: str) -> tuple[int, WireBody]:
        return 200, search_body(await payments.search_payments(conn, owner, params))

    return await _api(request, runtime, conn, run)


@router.get(BASE + "/v1/payments/{payment_id}")
async def read_payment(
    payment_id: str, request: Request, conn: ReadConn
) -> Response:
    runtime = runtime_of(request)
    async def run(owner: str) -> tuple[int, WireBody]:
        return 200, with_refunds_body(await payments.get_payment(conn, owner, payment_id))

    return await _api(request, runtime, conn, run)


@router.get(BASE + "/merchant_orders/{merchant_order_id}")
async def read_merchant_order(
    merchant_order_id: str, request: Request, conn: ReadConn
) -> Response:
    runtime = runtime_of(request)
    async def run(owner: str) -> tuple[int, WireBody]:
        number, found = await payments.merchant_order(conn, owner, merchant_order_id)
        return 200, merchant_order_body(number, found)

    return await _api(request, runtime, conn, run)


@router.put(BASE + "/v1/payments/{payment_id}")
async def update_payment(
    payment_id: str, request: Request, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> tuple[int, WireBody]:
        cancelled = await payments.cancel_payment(
            conn, runtime.clock, owner, payment_id, parse_body(raw)
        )
        return 200, with_refunds_body(cancelled)

    return await _api(request, runtime, conn, run)


@router.post(BASE + "/v1/payments/{payment_id}/refunds")
async def refund_payment(
    payment_id: str, request: Request, conn: Conn
) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()
    key = request.headers.get("x-idempotency-key")

    async def run(owner: str) -> tuple[int, WireBody]:
        made = await payments.refund(conn, runtime.clock, owner, payment_id, parse_body(raw), key)
        return 201, refund_body(made)

    return await _api(request, runtime, conn, run)


@router.get(BASE + "/v1/payments/{payment_id}/refunds")
async def list_refunds(
    payment_id: str, request: Request, conn: ReadConn
) -> Response:
    runtime = runtime_of(request)
    async def run(owner: str) -> tuple[int, WireBody]:
        return 200, [refund_body(r) for r in await payments.list_refunds(conn, owner, payment_id)]

    return await _api(request, runtime, conn, run)
