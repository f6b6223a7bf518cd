"""HTTP of simulated provider C's API (the secret key as Bearer, or as Basic user name).

Answers are the provider's JSON objects and errors. A POST with ``Idempotency-Key`` answers
the first answer again for the same request, and 409 for another request under the same key.
Each call runs in simulator/api.py's wrapper; events go out once it has committed.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from sqlalchemy import RowMapping, Table
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.db.records import record_of
from payorch.http.deps import Conn, ReadConn, runtime_of
from payorch.jsontypes import JsonObject
from payorch.simulator.api import Answer, ProviderApi, Refusals, Replays
from payorch.simulator.outbox.sender import after_commit
from payorch.simulator.provider_c import (
    disputes,
    events,
    holds,
    listing,
    refunds,
    repository,
    sessions,
    tables,
)
from payorch.simulator.provider_c.credentials import owner_of
from payorch.simulator.provider_c.records import SimCDispute, SimCPaymentIntent, SimCRefund, SimCSession
from payorch.simulator.provider_c.render import charge_body, dispute_body, intent_body, list_body, refund_body
from payorch.simulator.provider_c.wire import BASE, SimCWireError, integer, parse_form

router = APIRouter(tags=["Simulator: provider C"], include_in_schema=False)


def _secret_key(request: Request) -> dict[str, str]:
    authorization = request.headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    key = ""
    if scheme.lower() == "bearer":
        key = value.strip()
    elif scheme.lower() == "basic":
        try:
            key = base64.b64decode(value.strip(), validate=True).decode().partition(":")[0]
        except (binascii.Error, UnicodeDecodeError):
            key = ""
    return {"secret_key": key}


API = ProviderApi(
    name="provider_c",
    credentials=_secret_key,
    owner_of=owner_of,
    refusals=Refusals(
        unauthorized=SimCWireError(401, "Invalid API Key provided.", code="api_key_invalid").body,
        too_many=SimCWireError(429, "Too many requests.", type_="rate_limit_error", code="rate_limit").body,
        failed=SimCWireError(500, "An unknown error occurred.", type_="api_error").body,
        timed_out=SimCWireError(504, "Timed out.", type_="api_error").body,
    ),
    refused=SimCWireError,
    refusal=lambda error: (error.status, error.body),
    replays=Replays(
        header="idempotency-key",
        conflict=SimCWireError(
            409,
            "Keys for idempotent requests can only be used with the same parameters "
            "they were first used with.",
            type_="idempotency_error",
        ).body,
        replayed_headers={"Idempotent-Replayed": "true"},
    ),
)


async def _form(request: Request) -> JsonObject:
    raw = await request.body()
    return parse_form(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))


def _expands(request: Request, field: str) -> bool:
    return any(k.startswith("expand") and v == field for k, v in request.query_params.multi_items())


@router.post(BASE + "/v1/checkout/sessions")
async def create_session(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        made = await sessions.create(conn, runtime.clock, owner, await _form(request))
        return Answer(sessions.expanded(made, None, runtime.clock.now(), runtime.settings.public_url))

    return await API.answer(request, conn, run)


@router.get(BASE + "/v1/checkout/sessions/{session_id}")
async def read_session(session_id: str, request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        session, intent = await sessions.read(conn, owner, session_id)
        shown = intent if _expands(request, "payment_intent") else None
        return Answer(sessions.expanded(session, shown, runtime.clock.now(), runtime.settings.public_url))

    return await API.answer(request, conn, run)


@router.post(BASE + "/v1/checkout/sessions/{session_id}/expire")
async def expire_session(session_id: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        changed = await sessions.expire(conn, runtime.clock, runtime.settings.public_url, owner, session_id)
        now = runtime.clock.now()
        return Answer(
            sessions.expanded(changed.session, None, now, runtime.settings.public_url),
            after_commit=after_commit(events.NOTIFIER, changed.sent),
        )

    return await API.answer(request, conn, run)


@router.get(BASE + "/v1/checkout/sessions")
async def list_sessions(request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)
    query = request.query_params

    async def run(owner: str) -> Answer:
        limit = listing.limit_of(query)
        created = listing.created_of(query)
        if created.given:  # by creation time (reconciliation): any session of the owner's
            rows = await listing.page_of(
                conn, tables.simulator_c_sessions, owner, created, limit + 1, query.get("starting_after")
            )
            found = [record_of(SimCSession, row) for row in rows]
        else:
            after = None
            if query.get("starting_after"):
                after, _ = await sessions.read(conn, owner, query["starting_after"])
            found = await repository.list_sessions(
                conn,
                owner,
                payment_intent=query.get("payment_intent"),
                client_reference_id=query.get("client_reference_id"),
                limit=limit + 1,
                starting_after=after,
            )
        now = runtime.clock.now()
        data = [sessions.expanded(s, None, now, runtime.settings.public_url) for s in found[:limit]]
        return Answer(list_body(request.url.path, data, len(found) > limit))

    return await API.answer(request, conn, run)


async def _by_creation(
    request: Request, conn: AsyncConnection, table: Table, body_of: Callable[[RowMapping], JsonObject]
) -> Response:
    """A list by creation time, as the provider answers it (``listing``), each row by ``body_of``."""
    query = request.query_params

    async def run(owner: str) -> Answer:
        limit = listing.limit_of(query)
        created = listing.created_of(query)
        rows = await listing.page_of(conn, table, owner, created, limit + 1, query.get("starting_after"))
        data = [body_of(row) for row in rows[:limit]]
        return Answer(list_body(request.url.path, data, len(rows) > limit))

    return await API.answer(request, conn, run)


def _intent_body(request: Request, intent: SimCPaymentIntent) -> JsonObject:
    """As the API shows it now (a lapsed hold canceled), its charge expanded if asked."""
    seen = intent.as_seen(runtime_of(request).clock.now())
    expand = _expands(request, "latest_charge") and seen.latest_charge is not None
    return intent_body(seen, charge_body(seen) if expand else None)


@router.get(BASE + "/v1/payment_intents")
async def list_payment_intents(request: Request, conn: ReadConn) -> Response:
    return await _by_creation(
        request,
        conn,
        tables.simulator_c_payment_intents,
        lambda row: _intent_body(request, record_of(SimCPaymentIntent, row)),
    )


@router.get(BASE + "/v1/payment_intents/{intent_id}")
async def read_payment_intent(intent_id: str, request: Request, conn: ReadConn) -> Response:
    async def run(owner: str) -> Answer:
        intent = await repository.intent_of(conn, intent_id, owner=owner)
        if intent is None:
            raise SimCWireError(
                404, f"No such payment_intent: '{intent_id}'", code="resource_missing", param="intent"
            )
        return Answer(_intent_body(request, intent))

    return await API.answer(request, conn, run)


async def _hold_moved(request: Request, conn: AsyncConnection, intent_id: str, move: holds.Move) -> Response:
    """Capture or cancel a hold: the PaymentIntent after it, its events sent once committed."""
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        body = await _form(request)
        moved = await move(conn, runtime.clock, runtime.settings.public_url, owner, intent_id, body)
        sent = after_commit(events.NOTIFIER, moved.sent)
        return Answer(_intent_body(request, moved.intent), after_commit=sent)

    return await API.answer(request, conn, run)


@router.post(BASE + "/v1/payment_intents/{intent_id}/capture")
async def capture_payment_intent(intent_id: str, request: Request, conn: Conn) -> Response:
    return await _hold_moved(request, conn, intent_id, holds.capture)


@router.post(BASE + "/v1/payment_intents/{intent_id}/cancel")
async def cancel_payment_intent(intent_id: str, request: Request, conn: Conn) -> Response:
    return await _hold_moved(request, conn, intent_id, holds.cancel)


@router.get(BASE + "/v1/disputes")
async def list_disputes(request: Request, conn: ReadConn) -> Response:
    """By creation time (reconciliation reads a day's disputes through it)."""
    return await _by_creation(
        request, conn, tables.simulator_c_disputes, lambda row: dispute_body(record_of(SimCDispute, row))
    )


@router.get(BASE + "/v1/disputes/{dispute_id}")
async def read_dispute(dispute_id: str, request: Request, conn: ReadConn) -> Response:
    async def run(owner: str) -> Answer:
        return Answer(dispute_body(await disputes.read(conn, owner, dispute_id)))

    return await API.answer(request, conn, run)


@router.post(BASE + "/v1/refunds")
async def create_refund(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)

    async def run(owner: str) -> Answer:
        return Answer(refund_body(await refunds.create(conn, runtime.clock, owner, await _form(request))))

    return await API.answer(request, conn, run)


@router.get(BASE + "/v1/refunds/{refund_id}")
async def read_refund(refund_id: str, request: Request, conn: ReadConn) -> Response:
    async def run(owner: str) -> Answer:
        return Answer(refund_body(await refunds.read(conn, owner, refund_id)))

    return await API.answer(request, conn, run)


@router.get(BASE + "/v1/refunds")
async def list_refunds(request: Request, conn: ReadConn) -> Response:
    query = request.query_params

    async def run(owner: str) -> Answer:
        intent_id = query.get("payment_intent")
        created = listing.created_of(query)
        limit = min(integer(query.get("limit", "10"), "limit", minimum=1), 100)
        if not intent_id and created.given:  # by creation time (reconciliation)
            rows = await listing.page_of(
                conn, tables.simulator_c_refunds, owner, created, limit + 1, query.get("starting_after")
            )
            found = [record_of(SimCRefund, row) for row in rows]
        elif not intent_id:
            raise SimCWireError(400, "List refunds by payment_intent or created.", param="payment_intent")
        else:
            found = await repository.refunds_of(conn, owner, intent_id, limit + 1)
        data = [refund_body(r) for r in found[:limit]]
        return Answer(list_body(request.url.path, data, len(found) > limit))

    return await API.answer(request, conn, run)
