"""HTTP of simulated provider A's Webpay Plus REST 1.2 API (the buyer's page: page.py).

API answers use the provider's own bodies (``{"error_message": ...}``), never ours.
Writes with the provider's published integration keys (anyone has them) are limited per
client address (PAYORCH_SIMULATOR_PUBLIC_RATE_LIMIT); their rows are purged after a day
(simulator/jobs.py). Each call runs in simulator/api.py's wrapper.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.simulator.api import Answer, ProviderApi, Refusals
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

TRANSACTIONS = page.BASE + "/rswebpaytransaction/api/webpay/v1.2/transactions"

router = APIRouter(tags=["Simulator: provider A"], include_in_schema=False)


def _api_keys(request: Request) -> dict[str, str]:
    return {
        "commerce_code": request.headers.get("tbk-api-key-id", ""),
        "api_key": request.headers.get("tbk-api-key-secret", ""),
    }


API = ProviderApi(
    name="provider_a",
    credentials=_api_keys,
    owner_of=owner_of,
    refusals=Refusals(
        unauthorized={"error_message": "Not Authorized"},
        too_many={"error_message": "Too Many Requests"},
        failed={"error_message": "Internal Server Error"},
        timed_out={"error_message": "Gateway Timeout"},
    ),
    refused=SimAWireError,
    refusal=lambda error: (error.status, error.body()),
)


@router.post(TRANSACTIONS)
@router.post(TRANSACTIONS + "/")  # the official SDK posts to ".../transactions/"
async def create_transaction(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()
    public_url = runtime.settings.public_url

    held = deferred(request.headers.get("tbk-api-key-id", ""))

    async def run(owner: str) -> Answer:
        token = await service.create(conn, runtime.clock, owner, parse_create(raw), deferred=held)
        return Answer({"token": token, "url": public_url + page.PAGE})

    return await API.answer(request, conn, run)


@router.put(TRANSACTIONS + "/{token}")
async def commit_transaction(token: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> Answer:
        parse_object(raw, ())  # commit takes no fields
        return Answer(transaction_body(await service.commit(conn, runtime.clock, owner, token)))

    return await API.answer(request, conn, run)


@router.get(TRANSACTIONS + "/{token}")
async def transaction_status(token: str, request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        return Answer(transaction_body(await service.status(conn, runtime.clock, owner, token)))

    return await API.answer(request, conn, run)


@router.post(TRANSACTIONS + "/{token}/refunds")
async def refund_transaction(token: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> Answer:
        amount = parse_refund(raw)
        return Answer(refund_body(await service.refund(conn, runtime.clock, owner, token, amount)))

    return await API.answer(request, conn, run)


@router.put(TRANSACTIONS + "/{token}/capture")
async def capture_transaction(token: str, request: Request, conn: Conn) -> Response:
    """Deferred capture (docs/providers.md, "Holding and capturing")."""
    runtime = runtime_of(request)
    raw = await request.body()

    async def run(owner: str) -> Answer:
        captured = await service.capture(conn, runtime.clock, owner, token, parse_capture(raw))
        return Answer(capture_body(captured))

    return await API.answer(request, conn, run)
