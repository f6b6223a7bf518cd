"""HTTP of simulated provider D's Checkout API (``X-API-Key``), under ``/v71|v72/...`` and the live
layout ``/checkout/v71|v72/...``, in simulator/api.py's wrapper (Idempotency-Key replays); every
answer carries a ``pspReference`` header (the library reads an error's from it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import unquote

import orjson
from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.jsontypes import JsonObject
from payorch.simulator.api import Answer, ProviderApi, Refusals, Replays
from payorch.simulator.outbox.sender import after_commit
from payorch.simulator.provider_d import notify, payments, repository, sessions
from payorch.simulator.provider_d.credentials import merchant_account, owner_of
from payorch.simulator.provider_d.wire import BASE, NAME, SimDError, new_psp

router = APIRouter(tags=["Simulator: provider D"], include_in_schema=False)
VERSIONS = ("v71", "v72")
_PREFIXES = (BASE + "/{version}", BASE + "/checkout/{version}")

API = ProviderApi(
    name=NAME,
    credentials=lambda request: {"api_key": request.headers.get("x-api-key", "")},
    owner_of=owner_of,
    refusals=Refusals(
        unauthorized={"status": 401, "errorCode": "000", "errorType": "security",
                      "message": "HTTP Status Response - Unauthorized"},
        too_many=SimDError(429, "000", "Too many requests", "security").body,
        failed=SimDError(500, "000", "Internal error", "internal").body,
        timed_out=SimDError(504, "000", "Gateway timeout", "internal").body,
    ),
    refused=SimDError,
    refusal=lambda error: (error.status, error.body),
    replays=Replays(
        header="idempotency-key",
        conflict=SimDError(409, "704", "request already processed or in progress").body,
    ),
)


async def _answered(
    request: Request, conn: AsyncConnection, version: str, call: Callable[[str], Awaitable[Answer]]
) -> Response:
    """The wrapper's answer with D's headers; an unknown API version is not served (404)."""
    if version not in VERSIONS:
        return Response(status_code=404)
    response = await API.answer(request, conn, call)
    found = orjson.loads(response.body) if response.body else {}
    psp = found.get("pspReference") if isinstance(found, dict) else None
    response.headers["pspReference"] = psp if isinstance(psp, str) else new_psp()
    response.headers["Content-Type"] = "application/json;charset=UTF-8"
    if "idempotency-key" in request.headers:
        response.headers["Idempotency-Key"] = request.headers["idempotency-key"]
    return response


async def _json(request: Request) -> JsonObject:
    try:
        body = orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        body = None
    if not isinstance(body, dict):
        raise SimDError(400, "702", "Unexpected input: expected a JSON object")
    return body


async def create_session(version: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        merchant = merchant_account(runtime.cipher, owner)
        made = await sessions.create(conn, runtime.clock, owner, merchant, await _json(request))
        return Answer(sessions.created_body(made, runtime.settings.public_url), 201)

    return await _answered(request, conn, version, run)


async def session_result(version: str, session_id: str, request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)
    # Percent-decoded, '+' kept: the library sends the value as given, encoded or not (§5.2).
    raw = [v for k, _, v in (p.partition("=") for p in request.url.query.split("&")) if k == "sessionResult"]

    async def run(owner: str) -> Answer:
        found = await repository.session_of(conn, session_id, owner=owner)
        if found is None:
            raise SimDError(422, "100", "Field 'sessionId' is not valid.")
        presented = unquote(raw[0]) if raw else None
        return Answer(sessions.result_body(found, presented, runtime.clock.now()))

    return await _answered(request, conn, version, run)


async def modify(version: str, psp: str, kind: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    if kind not in payments.EVENTS:
        return Response(status_code=404)

    async def run(owner: str) -> Answer:
        merchant, public_url = merchant_account(runtime.cipher, owner), runtime.settings.public_url
        done = await payments.modify(
            conn, runtime.clock, public_url, owner, merchant, psp, kind, await _json(request)
        )
        return Answer(done.body, 201, after_commit=after_commit(notify.NOTIFIER, done.sent))

    return await _answered(request, conn, version, run)


@router.get(BASE + "/customer-area/sessions/{session_id}")
async def books(session_id: str, request: Request, conn: ReadConn) -> Response:
    """Not Adyen's API: its Customer Area's view of a session (the conformance kit's books)."""

    async def run(owner: str) -> Answer:
        found = await repository.session_of(conn, session_id, owner=owner)
        if found is None:
            raise SimDError(422, "100", "Field 'sessionId' is not valid.")
        shown = ("reference", "status", "psp", "payment", "held", "captured", "refunded", "currency")
        return Answer({name: getattr(found, name) for name in shown})

    return await API.answer(request, conn, run)


for prefix in _PREFIXES:
    router.add_api_route(prefix + "/sessions", create_session, methods=["POST"])
    router.add_api_route(prefix + "/sessions/{session_id}", session_result, methods=["GET"])
    router.add_api_route(prefix + "/payments/{psp}/{kind}", modify, methods=["POST"])
