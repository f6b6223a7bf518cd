"""All SQL of events."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, Select, bindparam, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import events

_INSERT = insert(events)  # built once; values come as parameters (hot path)
_INSERT_CTE = (
    insert(events)
    .values(
        id=bindparam("event_id"),
        application_id=bindparam("application_id"),
        type=bindparam("event_type"),
        payment_intent_id=bindparam("payment_intent_id"),
        payload=bindparam("payload"),
        created_at=bindparam("created_at", type_=events.c.created_at.type),
    )
    .cte("inserted_event")
)
_WITH_INSERT: dict[Select, Select] = {}  # type: ignore[type-arg]


async def insert_event(
    conn: AsyncConnection,
    *,
    event_id: str,
    application_id: str,
    type: str,
    payment_intent_id: str,
    payload: str,
    created_at: datetime,
    then: Select | None = None,  # type: ignore[type-arg]
    then_parameters: dict[str, object] | None = None,
) -> list[Row]:  # type: ignore[type-arg]
    """Insert the event; with ``then``, also run that query in the same round trip and answer its
    rows (PostgreSQL: the INSERT rides along as a data-modifying CTE, which always runs to
    completion; SQLite: two statements). The outbox fan-out reads the subscriptions this way."""
    if then is None:
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
        return []
    parameters = {
        "event_id": event_id,
        "application_id": application_id,
        "event_type": type,
        "payment_intent_id": payment_intent_id,
        "payload": payload,
        "created_at": created_at,
        **(then_parameters or {}),
    }
    if conn.dialect.name != "postgresql":
        await insert_event(
            conn,
            event_id=event_id,
            application_id=application_id,
            type=type,
            payment_intent_id=payment_intent_id,
            payload=payload,
            created_at=created_at,
        )
        return list((await conn.execute(then, parameters)).all())
    statement = _WITH_INSERT.get(then)
    if statement is None:
        statement = _WITH_INSERT[then] = then.add_cte(_INSERT_CTE)
    return list((await conn.execute(statement, parameters)).all())


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
