"""Write an event in the caller's transaction: the state change and its notice commit together.

Also the events' reads for other domains (an intent's timeline) and for the list of events.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.errors import ValidationFailed
from payorch.events import repository
from payorch.events.records import Event, StoredEvent, TimelineEntry
from payorch.events.types import ALL_EVENT_TYPES, EventType
from payorch.http.responses import dumps
from payorch.ids import new_id
from payorch.pagination import Page, page_of
from payorch.webhooks.fanout import SUBSCRIPTIONS, fan_out


async def emit(
    conn: AsyncConnection,
    *,
    application_id: str,
    type: EventType,
    payment_intent_id: str | None,
    data: Mapping[str, object],
    at: datetime,
) -> Event:
    """``payment_intent_id`` is None only for events about a webhook endpoint."""
    event_id = new_id("evt")
    of_intent = {} if payment_intent_id is None else {"payment_intent_id": payment_intent_id}
    body = {
        "id": event_id,
        "type": type.value,
        "created_at": isoformat(at),
        "data": {**of_intent, **data},
    }
    event = Event(event_id, application_id, type.value, payment_intent_id, dumps(body).decode(), at)
    # The subscriptions are read in the INSERT's round trip (one fewer per event on PostgreSQL).
    endpoints = await repository.insert_event_then(
        conn, event, SUBSCRIPTIONS, {"application_id": application_id}
    )
    await fan_out(
        conn,
        event_id=event.id,
        application_id=application_id,
        event_type=type,
        at=at,
        endpoints=endpoints,
    )
    return event


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
