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
The breaker's first minute is covered by a backoff: an endpoint failing fast (BACKOFF_AFTER
quick failures in a row, its streak younger than a minute) is held after each failure for as
long as it has been failing (``backoff_until``: at least BACKOFF_MIN, at most the breaker's hold),
and gets one attempt at a time for BACKOFF_MEMORY after that (queue.due_endpoints).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.webhooks import webhook_endpoints as endpoints
from payorch.db.types import UtcDateTime
from payorch.webhooks import repository
from payorch.webhooks.records import AUTO_DISABLED, SUCCEEDED, RecordedAttempt
from payorch.webhooks.sender import TIMEOUT

BREAKER_MIN_STREAK = timedelta(minutes=1)  # a burst of quick failures alone does not trip it
# An endpoint failing fast: this many quick failures in a row (a full round at the default
# per-endpoint cap), its streak younger than BREAKER_MIN_STREAK.
BACKOFF_AFTER = 32
BACKOFF_MIN = timedelta(seconds=1)  # the shortest hold; then as long as the streak is old
BACKOFF_MEMORY = timedelta(seconds=30)  # one attempt at a time for this long after a hold


@dataclass(frozen=True, slots=True)
class Breaker:
    failures: int  # PAYORCH_WEBHOOK_BREAKER_FAILURES
    hold: timedelta  # PAYORCH_WEBHOOK_BREAKER_SECONDS


@dataclass(frozen=True, slots=True)
class FailingEndpoint:
    """An endpoint's failure streak as recorded (returned for those it disabled)."""

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
    streak_open: Collection[str],
) -> list[FailingEndpoint]:
    """Updates the streak of each endpoint in ``results`` ((endpoint id, recorded attempt)) and
    disables those past both limits; returns them (the caller tells the application).

    ``streak_open``: the endpoints whose streak was open when their deliveries were claimed. A
    2xx ends only those streaks: a healthy endpoint's success costs no statement. A streak that
    another worker opened after our claim is ended by the next 2xx claimed after it."""
    succeeded: set[str] = set()
    timed_out: set[str] = set()  # not failing fast: a timeout has its own rule (claims.py)
    failed: dict[str, tuple[datetime, int]] = {}  # endpoint -> (first failure, count)
    for endpoint_id, result in results:
        if result.status == SUCCEEDED:
            succeeded.add(endpoint_id)
            continue
        if result.attempt.error == TIMEOUT:
            timed_out.add(endpoint_id)
        first, count = failed.get(endpoint_id, (result.attempt.started_at, 0))
        failed[endpoint_id] = (min(first, result.attempt.started_at), count + 1)
    for endpoint_id in succeeded:  # a 2xx in the batch ends the streak
        failed.pop(endpoint_id, None)
    ended = succeeded.intersection(streak_open)
    if ended:
        await conn.execute(
            update(endpoints)
            .where(endpoints.c.id.in_(sorted(ended)), endpoints.c.failed_attempts > 0)
            .values(failing_since=None, failed_attempts=0, breaker_until=None, backoff_until=None)
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
            endpoints.c.enabled,
        )
        .where(endpoints.c.id.in_(sorted(failed)))
        .with_for_update()
    )
    streaks = [FailingEndpoint(*row[:5]) for row in rows if row.enabled]
    quick = [e for e in streaks if e.id not in timed_out]
    holds = backoff(quick, now=now, max_hold=breaker.hold)
    if holds:
        await conn.execute(
            update(endpoints)
            .where(endpoints.c.id == bindparam("b_id"))
            .values(backoff_until=bindparam("b_until", type_=UtcDateTime)),
            [{"b_id": e, "b_until": until} for e, until in holds],
        )
    disabled = [
        e
        for e in streaks
        if e.failing_since <= now - disable_after and e.failed_attempts >= min_attempts
    ]
    for endpoint in disabled:
        await conn.execute(
            update(endpoints)
            .where(endpoints.c.id == endpoint.id)
            .values(enabled=False, disabled_reason=AUTO_DISABLED, disabled_at=now, updated_at=now)
        )
        await repository.pause_deliveries(conn, endpoint.id, now=now)
    return disabled


def backoff(
    streaks: Sequence[FailingEndpoint], *, now: datetime, max_hold: timedelta
) -> list[tuple[str, datetime]]:
    """(endpoint id, held until) for the endpoints failing fast: at least BACKOFF_AFTER failures
    in a row and the streak younger than the breaker's minute (after that the breaker rules).
    Each failure holds such an endpoint for as long as it has been failing (BACKOFF_MIN at
    least, ``max_hold`` at most), so its attempts come at 1, 2, 4, 8... seconds."""
    return [
        (e.id, now + min(max(now - e.failing_since, BACKOFF_MIN), max_hold))
        for e in streaks
        if e.failed_attempts >= BACKOFF_AFTER and e.failing_since > now - BREAKER_MIN_STREAK
    ]
