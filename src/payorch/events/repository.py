"""All SQL of events."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import events

_INSERT = insert(events)  # built once; values come as parameters (hot path)


async def insert_event(
    conn: AsyncConnection,
    *,
    event_id: str,
    application_id: str,
    type: str,
    payment_intent_id: str,
    payload: str,
    created_at: datetime,
) -> None:
    await conn.execute(
        _INSERT,
        {
            "id": event_id,
            "application_id": application_id,
            "type": type,
            "payment_intent_id": payment_intent_id,
            "payload": payload,
            "created_at": created_at,
        },
    )


async def timeline(conn: AsyncConnection, payment_intent_id: str) -> list[Row]:  # type: ignore[type-arg]
    query = (
        select(events.c.type, events.c.created_at)
        .where(events.c.payment_intent_id == payment_intent_id)
        .order_by(events.c.seq)
    )
    return list((await conn.execute(query)).all())
