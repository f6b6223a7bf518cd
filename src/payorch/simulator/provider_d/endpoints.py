"""HTTP of simulated provider D: its Checkout API (test ``/v71`` and live ``/checkout/v71``
layouts) and its hosted page, keyed by the session id (docs/simulator.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import unquote

import orjson
from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import RedirectResponse, Response

from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.jsontypes import JsonObject
from payorch.providers.provider_d.decline_codes import REASONS, REFUSED
from payorch.simulator import pages
from payorch.simulator import repository as shared
from payorch.simulator.api import Answer, ProviderApi, Refusals, Replays
from payorch.simulator.bodies import json_body
from payorch.simulator.outbox.sender import after_commit, send_after_commit
from payorch.simulator.provider_d import notify, repository, sessions, wire
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import BASE, NAME, PAGE_PATH, SimDError, merchant_account, owner_of

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
    # Every answer has a pspReference header: the library reads an error's from it.
    if version not in VERSIONS:
        return Response(status_code=404)
    response = await API.answer(request, conn, call)
    found = orjson.loads(response.body) if response.body else {}
    psp = found.get("pspReference") if isinstance(found, dict) else None
    response.headers["pspReference"] = psp if isinstance(psp, str) else wire.new_psp()
    response.headers["Content-Type"] = "application/json;charset=UTF-8"
    if "idempotency-key" in request.headers:
        response.headers["Idempotency-Key"] = request.headers["idempotency-key"]
    return response


async def _json(request: Request) -> JsonObject:
    refused = SimDError(400, "702", "Unexpected input: expected a JSON object")
    return json_body(await request.body(), lambda _: refused, loads=orjson.loads)


async def _session(conn: AsyncConnection, session_id: str, owner: str) -> SimDSession:
    found = await repository.session_of(conn, session_id, owner=owner)
    if found is None:
        raise SimDError(422, "100", "Field 'sessionId' is not valid.")
    return found


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

    presented = unquote(raw[0]) if raw else None

    async def run(owner: str) -> Answer:
        found = await _session(conn, session_id, owner)
        return Answer(sessions.result_body(found, presented, runtime.clock.now()))

    return await _answered(request, conn, version, run)


async def modify(version: str, psp: str, kind: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    if kind not in sessions.EVENTS:
        return Response(status_code=404)

    async def run(owner: str) -> Answer:
        merchant, public_url = merchant_account(runtime.cipher, owner), runtime.settings.public_url
        answer, sent = await sessions.modify(
            conn, runtime.clock, public_url, owner, merchant, psp, kind, await _json(request)
        )
        return Answer(answer, 201, after_commit=after_commit(notify.NOTIFIER, sent))

    return await _answered(request, conn, version, run)


@router.get(BASE + "/customer-area/sessions/{session_id}")
async def books(session_id: str, request: Request, conn: ReadConn) -> Response:
    """Not Adyen's API: its Customer Area's view of a session (the conformance kit's books)."""

    async def run(owner: str) -> Answer:
        found = await _session(conn, session_id, owner)
        shown = ("reference", "status", "psp", "payment", "held", "captured", "refunded", "currency")
        return Answer({name: getattr(found, name) for name in shown})

    return await API.answer(request, conn, run)


for prefix in _PREFIXES:
    router.add_api_route(prefix + "/sessions", create_session, methods=["POST"])
    router.add_api_route(prefix + "/sessions/{session_id}", session_result, methods=["GET"])
    router.add_api_route(prefix + "/payments/{psp}/{kind}", modify, methods=["POST"])


BRAND = "Provider D"
_ENDED = {
    "completed": "This payment is complete. Nothing left to pay.",
    "refused": "Too many refused attempts: this payment session is closed.",
    "canceled": "This payment was cancelled. Nothing was charged.",
    "expired": "This payment session has expired. Nothing was charged.",
}


def _page(request: Request, session: SimDSession, merchant: str) -> Response:
    status = session.status_at(runtime_of(request).clock.now())
    return pages.render(
        "provider_d/page.html", 200 if status == "active" else 409, session=session, merchant=merchant,
        ended=_ENDED.get(status, ""), reasons={code: words for code, (words, _) in REASONS.items()},
        refused=REFUSED, attempts_left=sessions.MAX_REFUSALS - session.refusals,
    )


@router.get(PAGE_PATH)
async def hosted_page(session_id: str, request: Request, conn: ReadConn) -> Response:
    session = await repository.session_of(conn, session_id, owner=None)
    if session is None:
        return pages.unknown_link("Unknown payment", BRAND)
    return _page(request, session, await shared.merchant_name(conn, session.owner))


@router.post(PAGE_PATH)
async def choose(session_id: str, request: Request) -> Response:
    """Two phases: the choice (and its notifications, outbox) commits, then they are sent."""
    runtime, form = runtime_of(request), await request.form()
    chosen = str(form.get("outcome", ""))
    if chosen not in sessions.OUTCOMES:
        return pages.no_outcome_chosen(BRAND)
    refusal, public_url = str(form.get("reason", REFUSED)), runtime.settings.public_url
    async with runtime.phases.transaction() as conn:
        decided = await sessions.decide(conn, runtime.clock, public_url, session_id, chosen, refusal)
        shop = await shared.merchant_name(conn, decided.session.owner) if decided else ""
    if decided is None:
        return pages.unknown_link("Unknown payment", BRAND)
    await send_after_commit(runtime, notify.NOTIFIER, decided.sent)
    if decided.back is None:  # an ended session sends the buyer nowhere: its page again, saying so
        return _page(request, decided.session, shop)
    return RedirectResponse(decided.back, 303)  # See Other: the browser GETs the return after this POST
