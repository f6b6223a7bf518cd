"""HTTP of simulated provider A's Webpay Plus REST 1.2 API (the buyer's page: page.py).

API answers use the provider's own bodies (``{"error_message": ...}``), never ours.
Writes with the provider's published integration keys (anyone has them) are limited per
client address (PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT); their rows are purged after a day
(simulator/jobs.py). Each call runs in the request's transaction.
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
from payorch.simulator.provider_a import page, service
from payorch.simulator.provider_a.credentials import deferred, owner_of
from payorch.simulator.provider_a.render import capture_body, refund_body, transaction_body
from payorch.simulator.provider_a.wire import (
    SimAWireError,
    parse_capture,
    parse_create,
    parse_object,
    parse_refund,
)
from payorch.simulator.public import public_write_refused

API = page.BASE + "/rswebpaytransaction/api/webpay/v1.2/transactions"

router = APIRouter(tags=["Simulator: provider A"], include_in_schema=False)

Operation = Callable[[str], Awaitable[JsonObject]]


async def _api(request: Request, runtime: Runtime, conn: AsyncConnection, operation: Operation) -> Response:
    """Authenticate by the Tbk-Api-Key headers, apply the owner's fault mode, run, answer."""
    owner = owner_of(
        runtime.cipher,
        {
            "commerce_code": request.headers.get("tbk-api-key-id", ""),
            "api_key": request.headers.get("tbk-api-key-secret", ""),
        },
    )
    if owner is None:
        return json_response({"error_message": "Not Authorized"}, 401)
    if owner == PUBLIC_OWNER and request.method != "GET":
        refused = await public_write_refused(request, runtime, {"error_message": "Too Many Requests"})
        if refused is not None:
            return refused
    fault = await active_fault(conn, owner, "provider_a")
    if fault == "error":
        return json_response({"error_message": "Internal Server Error"}, 500)
    if fault == "timeout":
        body = {"error_message": "Gateway Timeout"}
        return timeout_answer(body, runtime.settings.provider_timeout_seconds)
    try:
        return json_response(await operation(owner))
    except SimAWireError as error:
        await conn.rollback()  # a refused call applies nothing
        return json_response(error.body(), error.status)


@router.post(API)
@router.post(API + "/")  # the official SDK posts to ".../transactions/"
async def create_transaction(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()
    public_url = runtime.settings.public_url

    held = deferred(request.headers.get("tbk-api-key-id", ""))

    async def run(owner: str) -> JsonObject:
        token = await service.create(conn, runtime.clock, owner, parse_create(raw), deferred=held)
        return {"token": token, "url": public_url + page.PAGE}

    return await _api(request, runtime, conn, run)


@router.put(API + "/{token}")
async def commit_transaction(token: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> JsonObject:
        parse_object(raw, ())  # commit takes no fields
        return transaction_body(await service.commit(conn, runtime.clock, owner, token))

    return await _api(request, runtime, conn, run)


@router.get(API + "/{token}")
async def transaction_status(token: str, request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> JsonObject:
        return transaction_body(await service.status(conn, runtime.clock, owner, token))

    return await _api(request, runtime, conn, run)


@router.post(API + "/{token}/refunds")
async def refund_transaction(token: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> JsonObject:
        amount = parse_refund(raw)
        return refund_body(await service.refund(conn, runtime.clock, owner, token, amount))

    return await _api(request, runtime, conn, run)


@router.put(API + "/{token}/capture")
async def capture_transaction(token: str, request: Request, conn: Conn) -> Response:
    """Deferred capture (docs/providers.md, "Holding and capturing")."""
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> JsonObject:
        captured = await service.capture(conn, runtime.clock, owner, token, parse_capture(raw))
        return capture_body(captured)

    return await _api(request, runtime, conn, run)
