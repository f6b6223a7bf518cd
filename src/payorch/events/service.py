"""Write an event in the caller's transaction: the state change and its notice commit together.

Also the events' reads for other domains (an intent's timeline) and for the list of events.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.errors import ValidationFailed
from payorch.events import repository
from payorch.events.catalogue import TEST_EVENTS, EventData, payload_of
from payorch.events.records import Event, StoredEvent, TimelineEntry
from payorch.events.types import ALL_EVENT_TYPES, EventType
from payorch.ids import new_id
from payorch.jsontypes import dumps
from payorch.observability import tracing
from payorch.pagination import Page, page_of
from payorch.webhooks.fanout import SUBSCRIPTIONS, fan_out


def payload_event(*, application_id: str, payload: EventData, at: datetime, traced: bool = True) -> Event:
    """The event whose data is ``payload`` (its type is the model's, events/catalogue.py), not
    yet written: emit_payload writes it; so do a one-statement write and the test event. No
    event is made from a dict built by hand.

    An optional field that is None (``last_payment_error``, an unknown intent) is left out.
    ``traced``: record the current trace context (the webhook.test event never carried it)."""
    model = type(payload)
    assert payload_of(payload.TYPE) is model  # its own model, never a subclass's
    optional = {name for name, field in model.model_fields.items() if not field.is_required()}
    dumped = payload.model_dump(mode="json").items()
    data = {name: value for name, value in dumped if value is not None or name not in optional}
    intent_id = data.pop("payment_intent_id", None)
    payment_intent_id = intent_id if isinstance(intent_id, str) else None  # None: about an endpoint
    event_id, event_type = new_id("evt"), str(payload.TYPE)
    body = {
        "id": event_id,
        "type": event_type,
        "created_at": isoformat(at),
        **({"test": True} if event_type in TEST_EVENTS else {}),
        "data": {**({} if payment_intent_id is None else {"payment_intent_id": payment_intent_id}), **data},
    }
    return Event(
        event_id,
        application_id,
        event_type,
        payment_intent_id,
        dumps(body).decode(),
        at,
        tracing.current_traceparent() if traced else None,
    )


async def emit_payload(
    conn: AsyncConnection, *, application_id: str, payload: EventData, at: datetime
) -> Event:
    """Write the event whose data is ``payload``, and its deliveries, in ``conn``'s transaction.

    Only an EventType (ValueError for webhook.test: it goes to one endpoint, webhooks/tools.py)."""
    EventType(payload.TYPE)  # never fanned out to the subscriptions
    event = payload_event(application_id=application_id, payload=payload, at=at)
    await write(conn, event)
    return event


async def write(conn: AsyncConnection, event: Event) -> None:
    """Write a payload_event and its deliveries, in ``conn``'s transaction."""
    # The subscriptions are read in the INSERT's round trip (one fewer per event on PostgreSQL).
    endpoints = await repository.insert_event_then(
        conn, event, SUBSCRIPTIONS, {"application_id": event.application_id}
    )
    await fan_out(conn, event, endpoints)


# PostgreSQL's one-statement writes (payorch.db.one_statement): a payload_event of the intent written
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
