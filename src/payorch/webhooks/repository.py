"""All SQL of webhook endpoints, deliveries and delivery attempts."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Integer,
    Select,
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import applications, events
from payorch.db.tables.webhooks import (
    webhook_deliveries as deliveries,
)
from payorch.db.tables.webhooks import (
    webhook_delivery_attempts as attempts,
)
from payorch.db.tables.webhooks import (
    webhook_endpoints as endpoints,
)
from payorch.db.types import UtcDateTime
from payorch.webhooks import wakeups

PENDING, SUCCEEDED, EXHAUSTED = "PENDING", "SUCCEEDED", "EXHAUSTED"
NOTIFY_CHANNEL = "payorch_webhook_deliveries"

RowT = Any  # sqlalchemy.Row of varying width

# ---- endpoints ---------------------------------------------------------------------------


async def insert_endpoint(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(endpoints).values(**values))


async def get_endpoint(conn: AsyncConnection, application_id: str, endpoint_id: str) -> RowT | None:
    query = select(endpoints).where(
        endpoints.c.id == endpoint_id, endpoints.c.application_id == application_id
    )
    return (await conn.execute(query)).first()


async def list_endpoints(
    conn: AsyncConnection, application_id: str, *, before: str | None, limit: int
) -> list[RowT]:
    query = select(endpoints).where(endpoints.c.application_id == application_id)
    if before is not None:
        query = query.where(endpoints.c.id < before)
    query = query.order_by(endpoints.c.id.desc()).limit(limit)
    return list((await conn.execute(query)).all())


async def update_endpoint(
    conn: AsyncConnection, application_id: str, endpoint_id: str, **values: Any
) -> None:
    await conn.execute(
        update(endpoints)
        .where(endpoints.c.id == endpoint_id, endpoints.c.application_id == application_id)
        .values(**values)
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


async def subscribed_endpoints(conn: AsyncConnection, application_id: str) -> list[RowT]:
    return list((await conn.execute(SUBSCRIBED_ENDPOINTS, {"application_id": application_id})).all())


# ---- deliveries --------------------------------------------------------------------------


async def insert_deliveries(conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
    await conn.execute(insert(deliveries), rows)


async def notify_workers(conn: AsyncConnection) -> None:
    """PostgreSQL delivers the notice at COMMIT (and not at all on rollback): a worker LISTENing
    wakes within milliseconds of the deliveries becoming visible. SQLite: in-process wake-up."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text(f"SELECT pg_notify('{NOTIFY_CHANNEL}', '')"))
    else:
        wakeups.fire()  # workers of this process; see wakeups.py for why this is safe


async def get_delivery(
    conn: AsyncConnection,
    application_id: str,
    endpoint_id: str,
    delivery_id: str,
    *,
    for_update: bool = False,
) -> RowT | None:
    query = select(deliveries).where(
        deliveries.c.id == delivery_id,
        deliveries.c.endpoint_id == endpoint_id,
        deliveries.c.application_id == application_id,
    )
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def list_deliveries(
    conn: AsyncConnection, application_id: str, endpoint_id: str, *, before: str | None, limit: int
) -> list[RowT]:
    query = select(deliveries).where(
        deliveries.c.endpoint_id == endpoint_id, deliveries.c.application_id == application_id
    )
    if before is not None:
        query = query.where(deliveries.c.id < before)
    query = query.order_by(deliveries.c.id.desc()).limit(limit)
    return list((await conn.execute(query)).all())


async def list_attempts(conn: AsyncConnection, delivery_id: str) -> list[RowT]:
    query = select(attempts).where(attempts.c.delivery_id == delivery_id).order_by(attempts.c.seq)
    return list((await conn.execute(query)).all())


async def restart_schedule(conn: AsyncConnection, delivery_id: str, *, now: datetime) -> None:
    """A new 7-attempt schedule whose first attempt is due now; clearing the lease token makes
    an attempt still in flight unable to apply its (older) result."""
    await conn.execute(
        update(deliveries)
        .where(deliveries.c.id == delivery_id)
        .values(
            status=PENDING,
            schedule_attempts=0,
            next_attempt_at=now,
            leased_until=None,
            lease_token=None,
            updated_at=now,
        )
    )


async def pause_deliveries(conn: AsyncConnection, endpoint_id: str, *, now: datetime) -> None:
    """PENDING without a next attempt: paused. An attempt in flight (leased) finishes first."""
    await conn.execute(
        update(deliveries)
        .where(
            deliveries.c.endpoint_id == endpoint_id,
            deliveries.c.status == PENDING,
            deliveries.c.lease_token.is_(None),
        )
        .values(next_attempt_at=None, updated_at=now)
    )


async def resume_deliveries(conn: AsyncConnection, endpoint_id: str, *, now: datetime) -> None:
    await conn.execute(
        update(deliveries)
        .where(
            deliveries.c.endpoint_id == endpoint_id,
            deliveries.c.status == PENDING,
            deliveries.c.next_attempt_at.is_(None),
        )
        .values(next_attempt_at=now, updated_at=now)
    )


# ---- the worker's claim and apply ---------------------------------------------------------


# The claim's statements are built once (with bind parameters): building SQLAlchemy
# statements per claim cost more CPU than running them.
_NOW = bindparam("now", type_=UtcDateTime)
_DUE = (deliveries.c.status == PENDING, deliveries.c.next_attempt_at <= _NOW)


def _due_endpoints_statement() -> Select[tuple[str, str]]:
    oldest_due = (
        select(deliveries.c.next_attempt_at)
        .where(deliveries.c.endpoint_id == endpoints.c.id, *_DUE)
        .order_by(deliveries.c.next_attempt_at)
        .limit(1)
        .scalar_subquery()
    )
    due = (
        select(endpoints.c.id, endpoints.c.application_id, oldest_due.label("due_at"))
        .where(
            endpoints.c.enabled.is_(True),
            endpoints.c.id.not_in(bindparam("exclude_endpoints", expanding=True)),
            endpoints.c.application_id.not_in(bindparam("exclude_applications", expanding=True)),
        )
        .subquery()
    )
    turn = func.row_number().over(partition_by=due.c.application_id, order_by=due.c.due_at)
    ranked = (
        select(due.c.id, due.c.application_id, due.c.due_at, turn.label("turn"))
        .where(due.c.due_at.is_not(None))
        .subquery()
    )
    return (
        select(ranked.c.id, ranked.c.application_id)
        .order_by(ranked.c.turn, ranked.c.due_at)
        .limit(bindparam("limit", type_=Integer))
    )


DUE_ENDPOINTS = _due_endpoints_statement()


async def due_endpoints(
    conn: AsyncConnection,
    *,
    now: datetime,
    limit: int,
    exclude_endpoints: Sequence[str],
    exclude_applications: Sequence[str],
) -> list[RowT]:
    """Enabled endpoints with a due delivery (id, application_id), taking turns between
    applications: each application's endpoint with the oldest due delivery first, then each
    one's second, and so on. One index probe per enabled endpoint (endpoint_id, status,
    next_attempt_at), so a backlog of any size behind an endpoint costs nothing here."""
    params = {
        "now": now,
        "limit": limit,
        "exclude_endpoints": list(exclude_endpoints),
        "exclude_applications": list(exclude_applications),
    }
    return list((await conn.execute(DUE_ENDPOINTS, params)).all())


@functools.lru_cache(maxsize=256)
def _lock_due_statement(shares: int) -> Select[Any]:
    """Deliveries of ``shares`` endpoints (endpoint_<n>), at most count_<n> of each."""
    arms = [
        select(
            select(deliveries.c.id)
            .where(deliveries.c.endpoint_id == bindparam(f"endpoint_{n}"), *_DUE)
            .order_by(deliveries.c.next_attempt_at)
            .limit(bindparam(f"count_{n}", type_=Integer))
            .with_for_update(skip_locked=True)
            .subquery()
            .c.id
        )
        for n in range(shares)
    ]
    chosen = (arms[0] if shares == 1 else union_all(*arms)).subquery()
    return select(
        deliveries.c.id,
        deliveries.c.application_id,
        deliveries.c.endpoint_id,
        deliveries.c.event_id,
        deliveries.c.attempts,
        deliveries.c.schedule_attempts,
        endpoints.c.url,
        endpoints.c.secret_encrypted,
        applications.c.environment,
        events.c.payload,
    ).select_from(
        chosen.join(deliveries, deliveries.c.id == chosen.c.id)
        .join(endpoints, endpoints.c.id == deliveries.c.endpoint_id)
        .join(applications, applications.c.id == deliveries.c.application_id)
        .join(events, events.c.id == deliveries.c.event_id)
    )


async def lock_due(
    conn: AsyncConnection, *, now: datetime, quotas: Sequence[tuple[str, int]]
) -> list[RowT]:
    """Up to ``count`` due deliveries of each (endpoint id, count), oldest due first, locked
    without waiting for rows another worker holds (SKIP LOCKED; SQLite's BEGIN IMMEDIATE
    serializes instead). Each endpoint's share is one index range read, not a scan."""
    if not quotas:
        return []
    params: dict[str, Any] = {"now": now}
    for n, (endpoint_id, count) in enumerate(quotas):
        params[f"endpoint_{n}"] = endpoint_id
        params[f"count_{n}"] = count
    return list((await conn.execute(_lock_due_statement(len(quotas)), params)).all())


async def lease(
    conn: AsyncConnection, ids: Sequence[str], *, until: datetime, token: str, now: datetime
) -> None:
    await conn.execute(
        update(deliveries)
        .where(deliveries.c.id.in_(list(ids)))
        .values(leased_until=until, next_attempt_at=until, lease_token=token, updated_at=now)
    )


async def still_leased(conn: AsyncConnection, claims: Sequence[tuple[str, str]]) -> set[str]:
    """Which of (delivery id, lease token) still hold their lease (locked until commit)."""
    if not claims:
        return set()
    tokens = dict(claims)
    query = (
        select(deliveries.c.id, deliveries.c.lease_token)
        .where(deliveries.c.id.in_(list(tokens)))
        .with_for_update()
    )
    rows = (await conn.execute(query)).all()
    return {
        row.id for row in rows if row.lease_token is not None and row.lease_token == tokens[row.id]
    }


async def apply_results(
    conn: AsyncConnection, updates: list[dict[str, Any]], attempt_rows: list[dict[str, Any]]
) -> None:
    if not updates:
        return
    statement = (
        update(deliveries)
        .where(deliveries.c.id == bindparam("b_id"))
        .values(
            status=bindparam("b_status"),
            attempts=bindparam("b_attempts"),
            schedule_attempts=bindparam("b_schedule_attempts"),
            next_attempt_at=bindparam("b_next_attempt_at", type_=UtcDateTime),
            leased_until=None,
            lease_token=None,
            last_attempt_at=bindparam("b_last_attempt_at", type_=UtcDateTime),
            response_status=bindparam("b_response_status"),
            response_excerpt=bindparam("b_response_excerpt"),
            error=bindparam("b_error"),
            updated_at=bindparam("b_updated_at", type_=UtcDateTime),
        )
    )
    await conn.execute(statement, updates)
    await conn.execute(insert(attempts), attempt_rows)


async def next_due_at(conn: AsyncConnection) -> datetime | None:
    query = select(deliveries.c.next_attempt_at).where(deliveries.c.status == PENDING)
    query = query.order_by(deliveries.c.next_attempt_at).limit(1)
    return (await conn.execute(query)).scalar_one_or_none()
