"""The SQL of the delivery worker's queue: find due endpoints, lock and lease their due
deliveries, check leases and apply results (webhooks/delivery_engine.py runs them).

The claim's join reads two other domains' tables (the application's environment, the event's
payload and trace context): the exception to "reads go through the owning service", because one round trip per
claim is the point of the join.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import (
    ColumnElement,
    Integer,
    RowMapping,
    Select,
    String,
    and_,
    bindparam,
    case,
    func,
    insert,
    or_,
    select,
    union_all,
)
from sqlalchemy import update as update_statement
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
from payorch.webhooks.health import BACKOFF_MEMORY
from payorch.webhooks.records import PENDING, DueDelivery, DueEndpoint, RecordedAttempt
from payorch.webhooks.repository import attempt_values

# The claim's statements are built once (with bind parameters): building SQLAlchemy
# statements per claim cost more CPU than running them.
_NOW = bindparam("now", type_=UtcDateTime)
_DUE = (deliveries.c.status == PENDING, deliveries.c.next_attempt_at <= _NOW)
_RECENT = bindparam("recent", type_=UtcDateTime)  # now - health.BACKOFF_MEMORY


def _due_endpoints_statement() -> Select[str, str, bool, bool]:
    oldest_due = (
        select(deliveries.c.next_attempt_at)
        .where(deliveries.c.endpoint_id == endpoints.c.id, *_DUE)
        .order_by(deliveries.c.next_attempt_at)
        .limit(1)
        .scalar_subquery()
    )
    due = (
        select(
            endpoints.c.id,
            endpoints.c.application_id,
            endpoints.c.ordered,
            # One attempt at a time: its breaker tripped (until a 2xx), or it was backed off
            # for failing fast in the last BACKOFF_MEMORY (webhooks/health.py).
            or_(
                endpoints.c.breaker_until.is_not(None),
                and_(endpoints.c.backoff_until.is_not(None), endpoints.c.backoff_until > _RECENT),
            ).label("probing"),
            oldest_due.label("due_at"),
        )
        .where(
            endpoints.c.enabled.is_(True),
            # An open circuit breaker: not even probed for due deliveries (its backlog is free).
            or_(endpoints.c.breaker_until.is_(None), endpoints.c.breaker_until <= _NOW),
            # Backed off for failing fast: held likewise, for a shorter while.
            or_(endpoints.c.backoff_until.is_(None), endpoints.c.backoff_until <= _NOW),
            endpoints.c.id.not_in(bindparam("exclude_endpoints", expanding=True)),
            endpoints.c.application_id.not_in(bindparam("exclude_applications", expanding=True)),
        )
        .subquery()
    )
    turn = func.row_number().over(partition_by=due.c.application_id, order_by=due.c.due_at)
    ranked = (
        select(
            due.c.id,
            due.c.application_id,
            due.c.ordered,
            due.c.probing,
            due.c.due_at,
            turn.label("turn"),
        )
        .where(due.c.due_at.is_not(None))
        .subquery()
    )
    return (
        select(ranked.c.id, ranked.c.application_id, ranked.c.ordered, ranked.c.probing)
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
) -> list[DueEndpoint]:
    """Enabled endpoints with a due delivery, taking turns between applications: each
    application's endpoint with the oldest due delivery first, then each one's second, and so
    on. One index probe per enabled endpoint (endpoint_id, status, next_attempt_at), so a
    backlog of any size behind an endpoint costs nothing here."""
    params = {
        "now": now,
        "recent": now - BACKOFF_MEMORY,
        "limit": limit,
        "exclude_endpoints": list(exclude_endpoints),
        "exclude_applications": list(exclude_applications),
    }
    rows = await conn.execute(DUE_ENDPOINTS, params)
    return [DueEndpoint(row.id, row.application_id, row.ordered, row.probing) for row in rows]


# lock_endpoints' two statements, built once (every claim runs them).
_IDS = bindparam("ids", expanding=True, type_=String)
_LOCK_ENDPOINTS = (
    select(
        endpoints.c.id,
        # Held as the row stands once locked (due_endpoints read it before the lock).
        or_(
            endpoints.c.enabled.is_not(True),
            and_(endpoints.c.breaker_until.is_not(None), endpoints.c.breaker_until > _NOW),
            and_(endpoints.c.backoff_until.is_not(None), endpoints.c.backoff_until > _NOW),
        ).label("held"),
    )
    .where(endpoints.c.id.in_(_IDS))
    .order_by(endpoints.c.id)
    .with_for_update(key_share=True)
)
_LEASED_ELSEWHERE = (
    select(deliveries.c.endpoint_id, func.count())
    .where(
        # (endpoint_id, leased_until) index: only the leased rows are read, however long the
        # endpoint's backlog.
        deliveries.c.endpoint_id.in_(_IDS),
        deliveries.c.leased_until > _NOW,
        deliveries.c.lease_token.is_not(None),
        ~deliveries.c.lease_token.like(bindparam("own_prefix"), escape="/"),
    )
    .group_by(deliveries.c.endpoint_id)
)


def _like_prefix(prefix: str) -> str:
    """A LIKE pattern matching what starts with ``prefix`` (its own % and _ escaped)."""
    return prefix.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"


@dataclass(frozen=True, slots=True)
class LockedEndpoints:
    """The candidate endpoints as they stand once their rows are locked (lock_endpoints)."""

    in_flight_elsewhere: dict[str, int]  # endpoint id -> the other workers' attempts in flight
    held: frozenset[str]  # disabled, or its breaker or backoff holds it now: claim none


async def lock_endpoints(
    conn: AsyncConnection, endpoint_ids: Sequence[str], *, now: datetime, token_prefix: str
) -> LockedEndpoints:
    """Locks the candidate endpoints' rows and reads, after the lock, which of them are held
    and the attempts in flight per endpoint by the other workers (lease tokens not starting
    with ``token_prefix``: the caller counts its own in memory, where an attempt ends when its
    answer arrives, not when its result is recorded).

    The endpoints' rows are locked first (FOR NO KEY UPDATE, in id order: no deadlock; it does
    not block the fan-out's inserts, whose foreign key takes only FOR KEY SHARE), so two workers
    claiming for one endpoint count one after the other and the per-endpoint cap holds across
    processes: the lease the first one writes is visible to the second once it gets the lock.
    Two statements on purpose: the count must take its snapshot after the lock is granted (one
    statement would count with the snapshot taken before waiting).

    The holds are read again under the lock because due_endpoints read them before it: a
    probe's failure recorded by another worker in between (its lease released, its breaker
    set, one transaction) would otherwise look like a free endpoint, and a second probe
    would follow the first at once."""
    if not endpoint_ids:
        return LockedEndpoints({}, frozenset())
    ids = sorted(endpoint_ids)
    locked = await conn.execute(_LOCK_ENDPOINTS, {"ids": ids, "now": now})
    held = frozenset(row.id for row in locked if row.held)
    rows = await conn.execute(
        _LEASED_ELSEWHERE, {"ids": ids, "now": now, "own_prefix": _like_prefix(token_prefix)}
    )
    return LockedEndpoints({endpoint_id: count for endpoint_id, count in rows}, held)


_CLAIMED_COLUMNS = (
    deliveries.c.id,
    deliveries.c.application_id,
    deliveries.c.endpoint_id,
    deliveries.c.event_id,
    deliveries.c.attempts,
    deliveries.c.schedule_attempts,
    endpoints.c.url,
    endpoints.c.secret_encrypted,
    # Whether the endpoint's failure streak was open at the claim: only then does a 2xx need a
    # statement to end it (webhooks/health.py record_streaks).
    (endpoints.c.failed_attempts > 0).label("streak_open"),
    applications.c.environment,
    events.c.payload,
    events.c.traceparent,
    # Signs beside the current secret until the rotation's overlap ends (docs/webhooks.md).
    case(
        (
            endpoints.c.previous_secret_expires_at > _NOW,
            endpoints.c.previous_secret_encrypted,
        ),
        else_=None,
    ).label("previous_secret_encrypted"),
)


def _no_earlier_pending() -> ColumnElement[bool]:
    """Ordered endpoints: no earlier event of the same payment intent has a PENDING delivery to
    this endpoint (in flight or waiting). Reads the intent's few events on their
    (payment_intent_id, seq) index and their deliveries on (event_id); the event rows are read
    in subqueries, never locked by the claim's FOR UPDATE."""
    this_event = events.alias("this_event")
    earlier_event = events.alias("earlier_event")
    earlier = deliveries.alias("earlier")
    # Correlated to the claimed delivery (two levels up, so named explicitly).
    of_this = (
        select(this_event.c.payment_intent_id, this_event.c.seq)
        .where(this_event.c.id == deliveries.c.event_id)
        .correlate(deliveries)
    )
    return ~(
        select(earlier.c.id)
        .join(earlier_event, earlier_event.c.id == earlier.c.event_id)
        .where(
            earlier_event.c.payment_intent_id
            == of_this.with_only_columns(this_event.c.payment_intent_id).scalar_subquery(),
            earlier_event.c.seq < of_this.with_only_columns(this_event.c.seq).scalar_subquery(),
            earlier.c.endpoint_id == deliveries.c.endpoint_id,
            earlier.c.status == PENDING,
        )
        .correlate(deliveries)
        .exists()
    )


@functools.lru_cache(maxsize=256)
def _lock_due_statement(ordered: tuple[bool, ...]) -> Select[*tuple[object, ...]]:
    """Deliveries of ``len(ordered)`` endpoints (endpoint_<n>), at most count_<n> of each;
    ordered[n]: endpoint_<n> takes only deliveries with no earlier PENDING one of their intent."""
    shares = len(ordered)
    arms = [
        select(
            select(deliveries.c.id)
            .where(
                deliveries.c.endpoint_id == bindparam(f"endpoint_{n}"),
                *_DUE,
                *((_no_earlier_pending(),) if ordered[n] else ()),
            )
            .order_by(deliveries.c.next_attempt_at)
            .limit(bindparam(f"count_{n}", type_=Integer))
            .with_for_update(skip_locked=True)
            .subquery()
            .c.id
        )
        for n in range(shares)
    ]
    chosen = (arms[0] if shares == 1 else union_all(*arms)).subquery()
    return select(*_CLAIMED_COLUMNS).select_from(
        chosen.join(deliveries, deliveries.c.id == chosen.c.id)
        .join(endpoints, endpoints.c.id == deliveries.c.endpoint_id)
        .join(applications, applications.c.id == deliveries.c.application_id)
        .join(events, events.c.id == deliveries.c.event_id)
    )


def _due_delivery(row: RowMapping) -> DueDelivery:
    return DueDelivery(**{column.name: row[column.name] for column in _CLAIMED_COLUMNS})


async def lock_due(
    conn: AsyncConnection,
    *,
    now: datetime,
    quotas: Sequence[tuple[str, int]],
    ordered: frozenset[str] = frozenset(),
) -> list[DueDelivery]:
    """Up to ``count`` due deliveries of each (endpoint id, count), oldest due first, locked
    without waiting for rows another worker holds (SKIP LOCKED; SQLite's BEGIN IMMEDIATE
    serializes instead). Each endpoint's share is one index range read, not a scan."""
    if not quotas:
        return []
    params: dict[str, object] = {"now": now}
    for n, (endpoint_id, count) in enumerate(quotas):
        params[f"endpoint_{n}"] = endpoint_id
        params[f"count_{n}"] = count
    flags = tuple(endpoint_id in ordered for endpoint_id, _ in quotas)
    result = await conn.execute(_lock_due_statement(flags), params)
    return [_due_delivery(row) for row in result.mappings()]


async def lease(
    conn: AsyncConnection, ids: Sequence[str], *, until: datetime, token: str, now: datetime
) -> None:
    await conn.execute(
        update_statement(deliveries)
        .where(deliveries.c.id.in_(list(ids)))
        .values(leased_until=until, next_attempt_at=until, lease_token=token, updated_at=now)
    )


async def still_leased(conn: AsyncConnection, claims: Sequence[tuple[str, str]]) -> dict[str, int]:
    """Which of (delivery id, lease token) still hold their lease (locked until commit), with
    each one's current schedule_attempts (0 when a retry was asked for during the attempt)."""
    if not claims:
        return {}
    tokens = dict(claims)
    query = (
        select(deliveries.c.id, deliveries.c.lease_token, deliveries.c.schedule_attempts)
        .where(deliveries.c.id.in_(list(tokens)))
        .with_for_update()
    )
    rows = (await conn.execute(query)).all()
    return {
        row.id: row.schedule_attempts
        for row in rows
        if row.lease_token is not None and row.lease_token == tokens[row.id]
    }


_APPLY = (
    update_statement(deliveries)
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
        failure_reason=bindparam("b_failure_reason"),
        failure_message=bindparam("b_failure_message"),
        updated_at=bindparam("b_updated_at", type_=UtcDateTime),
    )
)


async def apply_results(conn: AsyncConnection, recorded: Sequence[RecordedAttempt], *, now: datetime) -> None:
    """Each delivery's new state (its lease released) and its attempt row, in one batch each."""
    if not recorded:
        return
    updates = [
        {
            "b_id": r.attempt.delivery_id,
            "b_status": r.status,
            "b_attempts": r.attempt.number,
            "b_schedule_attempts": r.schedule_attempts,
            "b_next_attempt_at": r.next_attempt_at,
            "b_last_attempt_at": r.attempt.started_at,
            "b_response_status": r.attempt.response_status,
            "b_response_excerpt": r.attempt.response_excerpt,
            "b_error": r.attempt.error,
            "b_failure_reason": r.attempt.failure_reason,
            "b_failure_message": r.attempt.failure_message,
            "b_updated_at": now,
        }
        for r in recorded
    ]
    await conn.execute(_APPLY, updates)
    await conn.execute(insert(attempts), [attempt_values(r.attempt) for r in recorded])
