"""Write an event in the caller's transaction: the state change and its notice commit together.

Also the events' reads for other domains (an intent's timeline) and for the list of events.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TypedDict, Unpack

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.errors import ValidationFailed
from payorch.events import repository
from payorch.events.catalogue import EventData, payload_of
from payorch.events.records import Event, StoredEvent, TimelineEntry
from payorch.events.types import ALL_EVENT_TYPES, EventType
from payorch.ids import new_id
from payorch.jsontypes import dumps
from payorch.observability import tracing
from payorch.pagination import Page, page_of
from payorch.webhooks.fanout import SUBSCRIPTIONS, fan_out


class EventFields(TypedDict):
    """What an event is made of (emit's and new_event's keyword arguments)."""

    application_id: str
    type: EventType
    payment_intent_id: str | None  # None only for events about a webhook endpoint
    data: Mapping[str, object]
    at: datetime


def new_event(**fields: Unpack[EventFields]) -> Event:
    """The event and its payload, not yet written (emit writes it; so does a one-statement write)."""
    event_id = new_id("evt")
    type, at, payment_intent_id = fields["type"], fields["at"], fields["payment_intent_id"]
    of_intent = {} if payment_intent_id is None else {"payment_intent_id": payment_intent_id}
    body = {
        "id": event_id,
        "type": type.value,
        "created_at": isoformat(at),
        "data": {**of_intent, **fields["data"]},
    }
    return Event(
        event_id,
        fields["application_id"],
        type.value,
        payment_intent_id,
        dumps(body).decode(),
        at,
        tracing.current_traceparent(),
    )


async def emit(conn: AsyncConnection, **fields: Unpack[EventFields]) -> Event:
    """Write a new event and its deliveries in ``conn``'s transaction."""
    event = new_event(**fields)
    await write(conn, event)
    return event


async def emit_payload(
    conn: AsyncConnection, *, application_id: str, payload: EventData, at: datetime
) -> Event:
    """Write the event whose data is ``payload`` (its type is the model's, events/catalogue.py).

    An optional field that is None (``last_payment_error``, an unknown intent) is left out."""
    event_type = EventType(payload.TYPE)
    model = type(payload)
    assert payload_of(event_type) is model  # its own model, never a subclass's
    optional = {name for name, field in model.model_fields.items() if not field.is_required()}
    dumped = payload.model_dump(mode="json").items()
    data = {name: value for name, value in dumped if value is not None or name not in optional}
    intent_id = data.pop("payment_intent_id", None)
    return await emit(
        conn,
        application_id=application_id,
        type=event_type,
        payment_intent_id=intent_id if isinstance(intent_id, str) else None,
        data=data,
        at=at,
    )


async def write(conn: AsyncConnection, event: Event) -> None:
    """Write a new_event and its deliveries, in ``conn``'s transaction."""
    # The subscriptions are read in the INSERT's round trip (one fewer per event on PostgreSQL).
    endpoints = await repository.insert_event_then(
        conn, event, SUBSCRIPTIONS, {"application_id": event.application_id}
    )
    await fan_out(conn, event, endpoints)


# PostgreSQL's one-statement writes (payorch.db.one_statement): a new_event of the intent written
# by the fragment before it (fragment_parameters). Its deliveries are the caller's to chain
# (webhooks.fanout's fragments), as ``write`` fans out after its INSERT.
INTENT_EVENT_FRAGMENT = repository.INTENT_EVENT_FRAGMENT


def fragment_parameters(event: Event) -> dict[str, object]:
    return repository.event_parameters(event)


async def timeline(conn: AsyncConnection, payment_intent_id: str) -> list[TimelineEntry]:
    """The intent's events, oldest first."""
    return await repository.timeline(conn, payment_intent_id)


async def list_events(
    conn: AsyncConnection,
    application_id: str,
    *,
    type: str | None,
    payment_intent_id: str | None,
    cursor: str | None,
    limit: int,
) -> Page[StoredEvent]:
    if type is not None and type not in ALL_EVENT_TYPES:
        raise ValidationFailed.field("type", "Unknown event type.")
    # the cursor's pattern (digits) was checked by the list's query model
    items = await repository.list_events(
        conn,
        application_id,
        type=type,
        payment_intent_id=payment_intent_id,
        before_seq=int(cursor) if cursor is not None else None,
        limit=limit + 1,
    )
    return page_of(items, limit, lambda event: str(event.seq))
