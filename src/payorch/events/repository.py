"""All SQL of events."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

from sqlalchemy import Select, bindparam, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.one_statement import Fragment
from payorch.db.prepared import Prepared
from payorch.db.records import Row, record_of
from payorch.db.tables import events
from payorch.events.records import Event, StoredEvent, TimelineEntry

_INSERT = insert(events)  # built once; values come as parameters
_FIELDS = tuple(field.name for field in fields(Event))  # the table's columns but seq
_INSERT_CTE = (
    insert(events)
    .values(
        id=bindparam("event_id"),
        application_id=bindparam("application_id"),
        type=bindparam("event_type"),
        payment_intent_id=bindparam("payment_intent_id"),
        payload=bindparam("payload"),
        created_at=bindparam("created_at", type_=events.c.created_at.type),
        traceparent=bindparam("event_traceparent"),
    )
    .cte("inserted_event")
)
# The follow-up queries with the INSERT attached as a CTE, built once per query.
_WITH_INSERT: dict[Select[*tuple[object, ...]], Prepared] = {}


async def insert_event(conn: AsyncConnection, event: Event) -> None:
    await conn.execute(_INSERT, _values(event))


async def insert_event_then(
    conn: AsyncConnection,
    event: Event,
    then: Select[*tuple[object, ...]],
    then_parameters: Mapping[str, object],
) -> list[Row]:
    """Insert the event and run ``then`` in the same round trip; answer ``then``'s rows, which
    belong to its owner (the outbox fan-out reads webhook subscriptions this way). PostgreSQL:
    the INSERT rides along as a data-modifying CTE, which always runs to completion; SQLite: two
    statements."""
    parameters = {
        "event_id": event.id,
        "application_id": event.application_id,
        "event_type": event.type,
        "payment_intent_id": event.payment_intent_id,
        "payload": event.payload,
        "created_at": event.created_at,
        "event_traceparent": event.traceparent,
        **then_parameters,
    }
    if conn.dialect.name != "postgresql":
        await insert_event(conn, event)
        return list((await conn.execute(then, parameters)).mappings().all())
    cached = _WITH_INSERT.get(then)
    if cached is None:
        cached = _WITH_INSERT[then] = Prepared(then.add_cte(_INSERT_CTE))
    return await cached.all(conn, parameters)


def _values(event: Event) -> dict[str, object]:
    return {name: getattr(event, name) for name in _FIELDS}


_TIMELINE = Prepared(
    select(events.c.type, events.c.created_at)
    .where(events.c.payment_intent_id == bindparam("payment_intent_id"))
    .order_by(events.c.seq)
)  # built once (read on every GET of an intent)


async def timeline(conn: AsyncConnection, payment_intent_id: str) -> list[TimelineEntry]:
    rows = await _TIMELINE.all(conn, {"payment_intent_id": payment_intent_id})
    return [record_of(TimelineEntry, row, renamed={"at": "created_at"}) for row in rows]


async def list_events(
    conn: AsyncConnection,
    application_id: str,
    *,
    type: str | None,
    payment_intent_id: str | None,
    before_seq: int | None,
    limit: int,
) -> list[StoredEvent]:
    """Newest first by seq (the total order of events); keyset on seq."""
    query = select(events.c.seq, events.c.payload).where(events.c.application_id == application_id)
    if type is not None:
        query = query.where(events.c.type == type)
    if payment_intent_id is not None:
        query = query.where(events.c.payment_intent_id == payment_intent_id)
    if before_seq is not None:
        query = query.where(events.c.seq < before_seq)
    query = query.order_by(events.c.seq.desc()).limit(limit)
    return [StoredEvent(seq=row.seq, payload=row.payload) for row in await conn.execute(query)]


# PostgreSQL, one statement (payorch.db.one_statement): insert the event when the intent's
# fragment (``inserted_intent``) returned a row. Parameters: application_id and event_*
# (event_parameters).
INTENT_EVENT_FRAGMENT = Fragment(
    "inserted_event",
    "INSERT INTO events (id, application_id, type, payment_intent_id, payload, created_at, traceparent)"
    " SELECT CAST(:event_id AS TEXT), CAST(:application_id AS TEXT),"
    " CAST(:event_type AS TEXT), CAST(:event_payment_intent_id AS TEXT),"
    " CAST(:event_payload AS TEXT), CAST(:event_created_at AS TIMESTAMPTZ),"
    " CAST(:event_traceparent AS TEXT)"
    " WHERE EXISTS (SELECT 1 FROM inserted_intent) RETURNING id",
)


def event_parameters(event: Event) -> dict[str, object]:
    """The event_* parameters of insert_event_fragment."""
    return {
        "event_id": event.id,
        "event_type": event.type,
        "event_payment_intent_id": event.payment_intent_id,
        "event_payload": event.payload,
        "event_created_at": event.created_at,
        "event_traceparent": event.traceparent,
    }
