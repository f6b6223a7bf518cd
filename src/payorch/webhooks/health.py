"""Automatic disabling of endpoints that keep failing (docs/webhooks.md, Endpoints that keep
failing): the SQL and the rule, run by the delivery worker in the transaction that records the
attempts' results.

An endpoint's failure streak starts at its first failed attempt after a 2xx (``failing_since``)
and counts its failed attempts (``failed_attempts``); any 2xx ends it. When the streak is at
least ``disable_after`` old and has at least ``min_attempts`` attempts, the endpoint is disabled
(``disabled_reason`` = AUTO_DISABLED) and its queued deliveries pause, as a manual disable does.
Before that, a circuit breaker stops hammering it: after PAYORCH_WEBHOOK_BREAKER_FAILURES failed
attempts in a row (over at least a minute) no claim considers it for
PAYORCH_WEBHOOK_BREAKER_SECONDS (``breaker_until``), then it gets one attempt at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.webhooks import webhook_endpoints as endpoints
from payorch.db.types import UtcDateTime
from payorch.webhooks import repository
from payorch.webhooks.records import AUTO_DISABLED, SUCCEEDED, RecordedAttempt

BREAKER_MIN_STREAK = timedelta(minutes=1)  # a burst of quick failures alone does not trip it


@dataclass(frozen=True, slots=True)
class Breaker:
    failures: int  # PAYORCH_WEBHOOK_BREAKER_FAILURES
    hold: timedelta  # PAYORCH_WEBHOOK_BREAKER_SECONDS


@dataclass(frozen=True, slots=True)
class DisabledEndpoint:
    id: str
    application_id: str
    url: str
    failing_since: datetime
    failed_attempts: int


async def record_streaks(
    conn: AsyncConnection,
    results: Sequence[tuple[str, RecordedAttempt]],
    *,
    now: datetime,
    disable_after: timedelta,
    min_attempts: int,
    breaker: Breaker,
) -> list[DisabledEndpoint]:
    """Updates the streak of each endpoint in ``results`` ((endpoint id, recorded attempt)) and
    disables those past both limits; returns them (the caller tells the application)."""
    succeeded: set[str] = set()
    failed: dict[str, tuple[datetime, int]] = {}  # endpoint -> (first failure, count)
    for endpoint_id, result in results:
        if result.status == SUCCEEDED:
            succeeded.add(endpoint_id)
            continue
        first, count = failed.get(endpoint_id, (result.attempt.started_at, 0))
        failed[endpoint_id] = (min(first, result.attempt.started_at), count + 1)
    for endpoint_id in succeeded:  # a 2xx in the batch ends the streak
        failed.pop(endpoint_id, None)
    if succeeded:
        await conn.execute(
            update(endpoints)
            .where(endpoints.c.id.in_(sorted(succeeded)), endpoints.c.failed_attempts > 0)
            .values(failing_since=None, failed_attempts=0, breaker_until=None)
        )
    if not failed:
        return []
    streak = endpoints.c.failing_since
    await conn.execute(
        update(endpoints)
        .where(endpoints.c.id == bindparam("b_id"))
        .values(
            failing_since=func.coalesce(streak, bindparam("b_first", type_=UtcDateTime)),
            failed_attempts=endpoints.c.failed_attempts + bindparam("b_count"),
        ),
        [{"b_id": e, "b_first": first, "b_count": n} for e, (first, n) in sorted(failed.items())],
    )
    # Circuit breaker: a long enough streak holds the endpoint's attempts for a while; after
    # that, one attempt at a time (queue.due_endpoints) until a 2xx closes it.
    await conn.execute(
        update(endpoints)
        .where(
            endpoints.c.id.in_(sorted(failed)),
            endpoints.c.failed_attempts >= breaker.failures,
            endpoints.c.failing_since <= now - BREAKER_MIN_STREAK,
        )
        .values(breaker_until=now + breaker.hold)
    )
    rows = await conn.execute(
        select(
            endpoints.c.id,
            endpoints.c.application_id,
            endpoints.c.url,
            endpoints.c.failing_since,
            endpoints.c.failed_attempts,
        )
        .where(
            endpoints.c.id.in_(sorted(failed)),
            endpoints.c.enabled.is_(True),
            endpoints.c.failing_since <= now - disable_after,
            endpoints.c.failed_attempts >= min_attempts,
        )
        .with_for_update()
    )
    disabled = [DisabledEndpoint(*row) for row in rows]
    for endpoint in disabled:
        await conn.execute(
            update(endpoints)
            .where(endpoints.c.id == endpoint.id)
            .values(enabled=False, disabled_reason=AUTO_DISABLED, disabled_at=now, updated_at=now)
        )
        await repository.pause_deliveries(conn, endpoint.id, now=now)
    return disabled
