"""All SQL of events."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, bindparam, insert, select
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


_TIMELINE = (
    select(events.c.type, events.c.created_at)
    .where(events.c.payment_intent_id == bindparam("payment_intent_id"))
    .order_by(events.c.seq)
)  # built once (read on every GET of an intent)


async def timeline(conn: AsyncConnection, payment_intent_id: str) -> list[Row]:  # type: ignore[type-arg]
    result = await conn.execute(_TIMELINE, {"payment_intent_id": payment_intent_id})
    return list(result.all())


async def list_events(
    conn: AsyncConnection,
    application_id: str,
    *,
    type: str | None,
    payment_intent_id: str | None,
    before_seq: int | None,
    limit: int,
) -> list[Row]:  # type: ignore[type-arg]
    """Newest first by seq (the total order of events); keyset on seq."""
    query = select(events.c.seq, events.c.payload).where(events.c.application_id == application_id)
    if type is not None:
        query = query.where(events.c.type == type)
    if payment_intent_id is not None:
        query = query.where(events.c.payment_intent_id == payment_intent_id)
    if before_seq is not None:
        query = query.where(events.c.seq < before_seq)
    query = query.order_by(events.c.seq.desc()).limit(limit)
    return list((await conn.execute(query)).all())
