"""All SQL of webhook endpoints, deliveries and delivery attempts (records.py).

The worker's claim and apply statements are in queue.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import (
    ColumnElement,
    RowMapping,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.one_statement import Fragment
from payorch.db.records import column_values, given_values, record_of
from payorch.db.tables import events
from payorch.db.tables.webhooks import (
    webhook_deliveries as deliveries,
)
from payorch.db.tables.webhooks import (
    webhook_delivery_attempts as attempts,
)
from payorch.db.tables.webhooks import (
    webhook_endpoints as endpoints,
)
from payorch.webhooks import wakeups
from payorch.webhooks.records import (
    EXHAUSTED,
    PENDING,
    Delivery,
    DeliveryAttempt,
    DeliveryFilter,
    WebhookEndpoint,
)

# ---- endpoints ---------------------------------------------------------------------------


def _endpoint(row: RowMapping) -> WebhookEndpoint:
    return record_of(WebhookEndpoint, row, events=tuple(row["events"]))


async def insert_endpoint(conn: AsyncConnection, endpoint: WebhookEndpoint) -> None:
    await conn.execute(insert(endpoints).values(column_values(endpoint)))


_COUNT_ENDPOINTS = select(func.count()).where(
    endpoints.c.application_id == bindparam("application_id")
)


async def count_endpoints(conn: AsyncConnection, application_id: str) -> int:
    """The application's endpoints, enabled or not."""
    found = await conn.execute(_COUNT_ENDPOINTS, {"application_id": application_id})
    return int(found.scalar_one())


async def get_endpoint(
    conn: AsyncConnection, application_id: str, endpoint_id: str
) -> WebhookEndpoint | None:
    query = select(endpoints).where(
        endpoints.c.id == endpoint_id, endpoints.c.application_id == application_id
    )
    row = (await conn.execute(query)).mappings().first()
    return _endpoint(row) if row is not None else None


async def lock_endpoint(conn: AsyncConnection, application_id: str, endpoint_id: str) -> None:
    """Locks the endpoint's row until the transaction ends (FOR NO KEY UPDATE, as the delivery
    claim's lock_endpoints; SQLite: BEGIN IMMEDIATE serializes writers already)."""
    query = (
        select(endpoints.c.id)
        .where(endpoints.c.id == endpoint_id, endpoints.c.application_id == application_id)
        .with_for_update(key_share=True)
    )
    await conn.execute(query)


async def list_endpoints(
    conn: AsyncConnection, application_id: str, *, before: str | None, limit: int
) -> list[WebhookEndpoint]:
    query = select(endpoints).where(endpoints.c.application_id == application_id)
    if before is not None:
        query = query.where(endpoints.c.id < before)
    query = query.order_by(endpoints.c.id.desc()).limit(limit)
    return [_endpoint(row) for row in (await conn.execute(query)).mappings()]


async def update_endpoint(
    conn: AsyncConnection,
    application_id: str,
    endpoint_id: str,
    *,
    url: str | None = None,
    events: list[str] | None = None,
    enabled: bool | None = None,
    ordered: bool | None = None,
    now: datetime,
) -> None:
    """Sets the fields given (None: unchanged) and ``updated_at``."""
    changes = given_values(url=url, events=events, enabled=enabled, ordered=ordered)
    await conn.execute(
        update(endpoints)
        .where(endpoints.c.id == endpoint_id, endpoints.c.application_id == application_id)
        .values(updated_at=now, **changes)
    )


async def set_disabled(
    conn: AsyncConnection, endpoint_id: str, *, reason: str | None, at: datetime | None
) -> None:
    """Why and since when the endpoint is disabled (None, None: enabled); also ends its failure
    streak, so an endpoint enabled again is judged afresh (webhooks/health.py)."""
    await conn.execute(
        update(endpoints)
        .where(endpoints.c.id == endpoint_id)
        .values(
            disabled_reason=reason,
            disabled_at=at,
            failing_since=None,
            failed_attempts=0,
            breaker_until=None,
            backoff_until=None,
        )
    )


async def delete_endpoint(conn: AsyncConnection, application_id: str, endpoint_id: str) -> bool:
    """Deletes the endpoint with its deliveries and their attempts (ON DELETE CASCADE)."""
    result = await conn.execute(
        delete(endpoints).where(
            endpoints.c.id == endpoint_id, endpoints.c.application_id == application_id
        )
    )
    return result.rowcount == 1


# The application's enabled endpoints with their event filters (parameter: application_id).
# events.service.emit runs it in the same round trip as the event's INSERT (the outbox fan-out).
SUBSCRIBED_ENDPOINTS = select(endpoints.c.id, endpoints.c.events).where(
    endpoints.c.application_id == bindparam("application_id"), endpoints.c.enabled.is_(True)
)


async def subscribed_endpoints(
    conn: AsyncConnection, application_id: str
) -> list[tuple[str, Sequence[str]]]:
    """(endpoint id, event types) of SUBSCRIBED_ENDPOINTS."""
    rows = await conn.execute(SUBSCRIBED_ENDPOINTS, {"application_id": application_id})
    return [(row.id, list(row.events)) for row in rows]


# ---- deliveries --------------------------------------------------------------------------

_DELIVERY_COLUMNS = tuple(deliveries.c.keys())  # the record's fields have the columns' names
_INSERT_DELIVERY = insert(deliveries)  # built once: the outbox fan-out runs it for every event


def _delivery(row: RowMapping) -> Delivery:
    return Delivery(**{name: row[name] for name in _DELIVERY_COLUMNS})


async def insert_deliveries(conn: AsyncConnection, new: list[Delivery]) -> None:
    await conn.execute(
        _INSERT_DELIVERY,
        [{name: getattr(delivery, name) for name in _DELIVERY_COLUMNS} for delivery in new],
    )


_NOTIFY = text(f"SELECT pg_notify('{wakeups.NOTIFY_CHANNEL}', '')")  # built once


async def notify_workers(conn: AsyncConnection) -> None:
    """PostgreSQL delivers the notice at COMMIT (and not at all on rollback): a worker LISTENing
    wakes within milliseconds of the deliveries becoming visible. SQLite: in-process wake-up."""
    if conn.dialect.name == "postgresql":
        await conn.execute(_NOTIFY)
    else:
        wakeups.fire()  # workers of this process; see wakeups.py for why this is safe


# PostgreSQL, one statement (payorch.db.one_statement): the outbox fan-out as fragments.
# Parameters: application_id and fanout_* (fanout.fan_out_parameters).
# ``subscribed``: SUBSCRIBED_ENDPOINTS' rows for the event's type, numbered 1..n (the filter
# fanout.fan_out applies: [] = every type).
SUBSCRIBED_FRAGMENT = Fragment(
    "subscribed",
    "SELECT id, row_number() OVER (ORDER BY id) AS n FROM webhook_endpoints"
    " WHERE application_id = CAST(:application_id AS TEXT) AND enabled"
    " AND (events = CAST('[]' AS JSONB)"
    " OR events @> jsonb_build_array(CAST(:fanout_event_type AS TEXT)))",
)
# ``fits``: a row when the statement carries a delivery id for each (fanout_ids): the gate of
# the statement's first write, so nothing is written when it does not.
FITS_FRAGMENT = Fragment(
    "fits", "SELECT 1 WHERE (SELECT count(*) FROM subscribed) <= CAST(:fanout_capacity AS INTEGER)"
)
# ``queued_deliveries``: one PENDING delivery, due now, per subscribed endpoint, when the event's
# fragment (``inserted_event``) returned a row.
DELIVERIES_FRAGMENT = Fragment(
    "queued_deliveries",
    "INSERT INTO webhook_deliveries (id, application_id, endpoint_id, event_id, event_type,"
    " status, attempts, schedule_attempts, next_attempt_at, created_at, updated_at)"
    " SELECT (CAST(:fanout_ids AS TEXT[]))[s.n], CAST(:application_id AS TEXT), s.id,"
    " CAST(:fanout_event_id AS TEXT), CAST(:fanout_event_type AS TEXT), 'PENDING', 0, 0,"
    " CAST(:fanout_at AS TIMESTAMPTZ), CAST(:fanout_at AS TIMESTAMPTZ),"
    " CAST(:fanout_at AS TIMESTAMPTZ)"
    " FROM subscribed AS s WHERE EXISTS (SELECT 1 FROM inserted_event) RETURNING 1",
)
# ``notice``: wakes the workers when deliveries were queued (the notice goes out at the
# statement's commit, as notify_workers' does at its transaction's). The channel is
# wakeups.NOTIFY_CHANNEL, written out (a constant SQL string); tests/webhooks/test_create_fan_out.py
# listens on the constant.
NOTICE_FRAGMENT = Fragment(
    "notice",
    "SELECT pg_notify('payorch_webhook_deliveries', '') FROM queued_deliveries LIMIT 1",
)


async def get_delivery(
    conn: AsyncConnection,
    application_id: str,
    endpoint_id: str,
    delivery_id: str,
    *,
    for_update: bool = False,
) -> Delivery | None:
    query = select(deliveries).where(
        deliveries.c.id == delivery_id,
        deliveries.c.endpoint_id == endpoint_id,
        deliveries.c.application_id == application_id,
    )
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return _delivery(row) if row is not None else None


async def get_any_delivery(conn: AsyncConnection, delivery_id: str) -> Delivery | None:
    """By id alone: the operator's command line, which acts for any application."""
    row = (await conn.execute(select(deliveries).where(deliveries.c.id == delivery_id))).mappings().first()
    return _delivery(row) if row is not None else None


async def list_deliveries(
    conn: AsyncConnection,
    application_id: str,
    query: DeliveryFilter,
    *,
    lowest_id: str | None,
    below_id: str | None,
    limit: int,
) -> list[Delivery]:
    """Newest first, keyset on the id (time-ordered) over the application's (status,) id index."""
    found = select(deliveries).where(deliveries.c.application_id == application_id)
    if query.endpoint_id is not None:
        found = found.where(deliveries.c.endpoint_id == query.endpoint_id)
    if query.statuses:
        found = found.where(deliveries.c.status.in_(query.statuses))
    if query.event_type is not None:
        found = found.where(deliveries.c.event_type == query.event_type)
    if query.payment_intent_id is not None:
        # Read beside the query (docs/architecture.md): an intent's events, on their own index.
        of_intent = select(events.c.id).where(
            events.c.payment_intent_id == query.payment_intent_id,
            events.c.application_id == application_id,
        )
        found = found.where(deliveries.c.event_id.in_(of_intent))
    if lowest_id is not None:
        found = found.where(deliveries.c.id >= lowest_id)
    if below_id is not None:
        found = found.where(deliveries.c.id < below_id)
    found = found.order_by(deliveries.c.id.desc()).limit(limit)
    return [_delivery(row) for row in (await conn.execute(found)).mappings()]


_ATTEMPT_COLUMNS = tuple(c for c in attempts.c.keys() if c != "seq")


def attempt_values(attempt: DeliveryAttempt) -> dict[str, object]:
    return {name: getattr(attempt, name) for name in _ATTEMPT_COLUMNS}


async def list_attempts(conn: AsyncConnection, delivery_id: str) -> list[DeliveryAttempt]:
    query = select(attempts).where(attempts.c.delivery_id == delivery_id).order_by(attempts.c.seq)
    return [
        DeliveryAttempt(**{name: row[name] for name in _ATTEMPT_COLUMNS})
        for row in (await conn.execute(query)).mappings()
    ]


async def restart_schedule(
    conn: AsyncConnection, delivery_id: str, *, in_flight: bool, now: datetime
) -> None:
    """A new 7-attempt schedule. Due now, unless an attempt is in flight (``in_flight``): that
    attempt keeps its lease and counts as the new schedule's first, so a retry never sends a
    second concurrent request (webhooks/delivery_engine.py applies its result to the new schedule)."""
    if in_flight:
        changes: dict[str, object] = {"status": PENDING, "schedule_attempts": 0}
    else:
        changes = {
            "status": PENDING,
            "schedule_attempts": 0,
            "next_attempt_at": now,
            "leased_until": None,
            "lease_token": None,
        }
    await conn.execute(
        update(deliveries).where(deliveries.c.id == delivery_id).values(updated_at=now, **changes)
    )


async def restart_failed(
    conn: AsyncConnection,
    application_id: str,
    endpoint_id: str,
    *,
    since: datetime,
    include_failing: bool,
    next_attempt_at: datetime | None,
    now: datetime,
) -> int:
    """A new schedule for the endpoint's EXHAUSTED deliveries created since ``since`` (with
    ``include_failing``, also PENDING ones with a failed attempt in their schedule and no attempt
    in flight). Returns how many (webhooks/recover.py)."""
    which = deliveries.c.status == EXHAUSTED
    if include_failing:
        failing = and_(
            deliveries.c.status == PENDING,
            deliveries.c.schedule_attempts > 0,
            deliveries.c.lease_token.is_(None),
        )
        which = or_(which, failing)
    result = await conn.execute(
        update(deliveries)
        .where(
            deliveries.c.endpoint_id == endpoint_id,
            deliveries.c.application_id == application_id,
            deliveries.c.created_at >= since,
            which,
        )
        .values(
            status=PENDING, schedule_attempts=0, next_attempt_at=next_attempt_at, updated_at=now
        )
    )
    return int(result.rowcount)


async def pause_deliveries(conn: AsyncConnection, endpoint_id: str, *, now: datetime) -> None:
    """PENDING without a next attempt: paused. An attempt in flight (leased) finishes first."""
    not_leased = deliveries.c.lease_token.is_(None)
    await _reschedule_pending(conn, endpoint_id, not_leased, next_attempt_at=None, now=now)


async def resume_deliveries(conn: AsyncConnection, endpoint_id: str, *, now: datetime) -> None:
    paused = deliveries.c.next_attempt_at.is_(None)
    await _reschedule_pending(conn, endpoint_id, paused, next_attempt_at=now, now=now)


async def _reschedule_pending(
    conn: AsyncConnection,
    endpoint_id: str,
    which: ColumnElement[bool],
    *,
    next_attempt_at: datetime | None,
    now: datetime,
) -> None:
    """The endpoint's PENDING deliveries that match ``which`` are next due at ``next_attempt_at``."""
    await conn.execute(
        update(deliveries)
        .where(deliveries.c.endpoint_id == endpoint_id, deliveries.c.status == PENDING, which)
        .values(next_attempt_at=next_attempt_at, updated_at=now)
    )
