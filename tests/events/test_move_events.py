"""A move's events (intents.states.EVENTS_OF_MOVE, written by intents.service.apply_move), on SQLite
and PostgreSQL: every move emits the event it always did; a move mapped to several events writes
each, in order, in the move's transaction (no real move has two today: the mapping is patched
here); payloads that are not the move's events are refused before anything is written."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest

from payorch.events import service as events_service
from payorch.events.catalogue import EventData, IntentEventData
from payorch.events.records import Event
from payorch.events.types import EventType
from payorch.intents import repository, service
from payorch.intents.records import PaymentIntent
from payorch.intents.states import EVENTS_OF_MOVE, Move
from payorch.runtime import Runtime
from tests.events.samples import sample_payloads
from tests.kit import create_intent

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy.ext.asyncio import AsyncConnection

    from tests.kit import Sandbox

E = EventType
TWO = (E.PAYMENT_PROCESSING, E.PAYMENT_AUTHORIZED)  # a test-only pair for Move.AUTHORIZE


class _Refused(Exception):
    pass


def test_every_move_emits_the_event_it_always_did() -> None:
    assert EVENTS_OF_MOVE == {
        Move.START_CHECKOUT: (E.PAYMENT_CHECKOUT_STARTED,),
        Move.PROCESS: (E.PAYMENT_PROCESSING,),
        Move.AUTHORIZE: (E.PAYMENT_AUTHORIZED,),
        Move.HOLD: (E.PAYMENT_AUTHORIZED,),  # capture_method manual: held
        Move.CAPTURE: (E.PAYMENT_CAPTURED,),
        Move.VOID: (E.PAYMENT_VOIDED,),
        Move.FAIL: (E.PAYMENT_FAILED,),
        Move.DECLINE_ATTEMPT: (E.PAYMENT_ATTEMPT_FAILED,),  # a second chance offered
        Move.CANCEL: (E.PAYMENT_CANCELLED,),
        Move.EXPIRE: (E.PAYMENT_EXPIRED,),
        Move.REFUND_PART: (),  # refund.succeeded is the refund service's
        Move.REFUND_REST: (),
    }


async def _move(
    runtime: Runtime,
    sandbox: Sandbox,
    intent_id: str,
    move: Move,
    payloads: tuple[IntentEventData, ...],
    provider: str | None = None,
) -> PaymentIntent:
    """apply_move on the intent read FOR UPDATE, in a transaction of its own."""
    async with runtime.database.transaction() as conn:
        row = await repository.get(conn, sandbox.application_id, intent_id, for_update=True)
        assert row is not None
        return await service.apply_move(conn, runtime.clock, row, move, *payloads, provider=provider)


@pytest.fixture
def two_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """Move.AUTHORIZE emits TWO (a test-only mapping)."""
    monkeypatch.setitem(EVENTS_OF_MOVE, Move.AUTHORIZE, TWO)


@pytest.fixture
async def intent_id(client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox) -> str:
    """A new intent moved to REQUIRES_ACTION."""
    intent_id = str((await create_intent(client, sandbox))["id"])
    started = sample_payloads(Move.START_CHECKOUT, intent_id)
    await _move(runtime, sandbox, intent_id, Move.START_CHECKOUT, started, provider="provider_a")
    return intent_id


async def _events(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> list[dict[str, object]]:
    """The intent's events, oldest first."""
    listed = await client.get("/v1/events", params={"payment_intent_id": intent_id}, headers=sandbox.headers)
    assert listed.status_code == 200, listed.text
    return list(reversed(listed.json()["items"]))


async def test_a_move_with_two_events_writes_both_in_order(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, intent_id: str, two_events: None
) -> None:
    moved = await _move(
        runtime, sandbox, intent_id, Move.AUTHORIZE, sample_payloads(Move.AUTHORIZE, intent_id)
    )
    assert moved.status == "AUTHORIZED"
    written = await _events(client, sandbox, intent_id)
    assert [event["type"] for event in written] == [
        E.PAYMENT_INTENT_CREATED,
        E.PAYMENT_CHECKOUT_STARTED,
        *TWO,
    ]
    both = written[-2:]
    about = {"payment_intent_id": intent_id, "external_reference": "order-1", "metadata": {}}  # samples.py
    assert both[0]["created_at"] == both[1]["created_at"]  # the move's time
    assert [event["data"] for event in both] == [
        {**about, "provider": "provider_a", "reason": "In review."},
        {
            **about,
            "payment_id": "pay_sample",
            "provider": "provider_a",
            "amount": 1500,
            "currency": "CLP",
            "capture_method": "automatic",
        },
    ]


async def test_the_move_and_its_events_commit_together_or_not_at_all(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    intent_id: str,
    two_events: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second event's write fails: the status and the first event are not written either."""
    emit_payload = events_service.emit_payload
    calls: list[str] = []

    async def second_fails(
        conn: AsyncConnection, *, application_id: str, payload: EventData, at: datetime
    ) -> Event:
        calls.append(str(payload.TYPE))
        if len(calls) == 2:
            raise _Refused
        return await emit_payload(conn, application_id=application_id, payload=payload, at=at)

    monkeypatch.setattr(events_service, "emit_payload", second_fails)
    with pytest.raises(_Refused):
        await _move(runtime, sandbox, intent_id, Move.AUTHORIZE, sample_payloads(Move.AUTHORIZE, intent_id))
    assert calls == list(TWO)
    monkeypatch.undo()
    written = await _events(client, sandbox, intent_id)
    assert [event["type"] for event in written] == [E.PAYMENT_INTENT_CREATED, E.PAYMENT_CHECKOUT_STARTED]
    async with runtime.database.transaction() as conn:
        assert await repository.status_of(conn, intent_id) == "REQUIRES_ACTION"


@pytest.mark.parametrize(
    "given",
    [
        pytest.param((), id="missing"),
        pytest.param((E.PAYMENT_FAILED,), id="another-event"),
        pytest.param((E.PAYMENT_AUTHORIZED, E.PAYMENT_AUTHORIZED), id="one-too-many"),
        pytest.param("other-intent", id="another-intent"),
    ],
)
async def test_payloads_that_are_not_the_moves_events_are_refused(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    intent_id: str,
    given: tuple[EventType, ...] | str,
) -> None:
    if isinstance(given, str):
        payloads = sample_payloads(Move.AUTHORIZE, "payi_other")
    else:
        payloads = tuple(p for t in given for p in sample_payloads(_move_of(t), intent_id))
    with pytest.raises(ValueError, match="authorize"):
        await _move(runtime, sandbox, intent_id, Move.AUTHORIZE, payloads)
    written = await _events(client, sandbox, intent_id)
    assert [event["type"] for event in written] == [E.PAYMENT_INTENT_CREATED, E.PAYMENT_CHECKOUT_STARTED]
    async with runtime.database.transaction() as conn:
        assert await repository.status_of(conn, intent_id) == "REQUIRES_ACTION"


def _move_of(event_type: EventType) -> Move:
    return next(move for move, emitted in EVENTS_OF_MOVE.items() if emitted == (event_type,))
