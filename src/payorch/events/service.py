"""Write an event in the caller's transaction: the state change and its notice commit together."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.events import repository
from payorch.events.types import EventType
from payorch.http.responses import dumps
from payorch.ids import new_id
from payorch.webhooks.fanout import SUBSCRIPTIONS, fan_out


@dataclass(frozen=True)
class Event:
    id: str
    application_id: str
    type: str
    payment_intent_id: str
    payload: str  # the exact JSON body a webhook delivery signs and sends
    created_at: datetime


async def emit(
    conn: AsyncConnection,
    *,
    application_id: str,
    type: EventType,
    payment_intent_id: str,
    data: dict[str, Any],
    at: datetime,
) -> Event:
    event_id = new_id("evt")
    body = {
        "id": event_id,
        "type": type.value,
        "created_at": isoformat(at),
        "data": {"payment_intent_id": payment_intent_id, **data},
    }
    event = Event(event_id, application_id, type.value, payment_intent_id, dumps(body).decode(), at)
    # The subscriptions are read in the INSERT's round trip (one fewer per event on PostgreSQL).
    endpoints = await repository.insert_event(
        conn,
        event_id=event.id,
        application_id=application_id,
        type=event.type,
        payment_intent_id=payment_intent_id,
        payload=event.payload,
        created_at=at,
        then=SUBSCRIPTIONS,
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
