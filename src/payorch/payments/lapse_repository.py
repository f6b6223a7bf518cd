"""The SQL of holds nobody captured (payments/lapse_job.py): holds coming due, the once-only mark
of payment.capture_due, the deadline check's claim, and the counts the metrics report. Built
once at import."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, Select, bindparam, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments

HELD = "REQUIRES_CAPTURE"
_c = payments.c

_NOTICE_DUE = (
    select(_c.id)
    .where(_c.status == HELD, _c.capture_due_at.is_(None), _c.capture_before <= bindparam("due_by"))
    .order_by(_c.capture_before)
    .limit(bindparam("batch", type_=Integer))
)


async def notices_due(conn: AsyncConnection, due_by: datetime, batch: int) -> list[str]:
    """Held payments whose capture_before is at or before ``due_by`` and not yet told due."""
    return list((await conn.execute(_NOTICE_DUE, {"due_by": due_by, "batch": batch})).scalars())


_MARK_NOTICE = (
    update(payments)
    .where(_c.id == bindparam("payment_id"), _c.status == HELD, _c.capture_due_at.is_(None))
    .values(capture_due_at=bindparam("at"))
)


async def mark_notice(conn: AsyncConnection, payment_id: str, at: datetime) -> bool:
    """Compare-and-set: True for the one pass that marks it (and so sends payment.capture_due)."""
    result = await conn.execute(_MARK_NOTICE, {"payment_id": payment_id, "at": at})
    return int(result.rowcount) == 1


def _ends(void_when_due: bool) -> Select[tuple[str]]:
    # Past capture_before: ask the provider. With PAYORCH_HOLD_UNCAPTURED=void, also every hold
    # already told due (the notice comes first, in the same pass).
    past = _c.capture_before <= bindparam("deadline_by")
    due = or_(past, _c.capture_due_at.is_not(None)) if void_when_due else past
    return (
        select(_c.id)
        .where(
            _c.status == HELD,
            _c.hold_action.is_(None),  # a capture or void in flight is settle-holds' to finish
            or_(_c.hold_check_at.is_(None), _c.hold_check_at <= bindparam("now")),
            due,
        )
        .order_by(_c.capture_before)
        .limit(bindparam("batch", type_=Integer))
        .with_for_update(skip_locked=True)
    )


_ENDS = {False: _ends(False), True: _ends(True)}
_LEASE = (
    update(payments)
    .where(_c.id.in_(bindparam("ids", expanding=True)))
    .values(hold_check_at=bindparam("until"))
)


async def claim_ends(
    conn: AsyncConnection,
    now: datetime,
    deadline_by: datetime,
    until: datetime,
    batch: int,
    *,
    void_when_due: bool,
) -> list[str]:
    """Holds to end now (capture_before at or before ``deadline_by``, or told due when voiding),
    leased until ``until``: the next ask of the provider if this one does not settle them
    (unreachable, or still holding)."""
    params = {"now": now, "deadline_by": deadline_by, "batch": batch}
    ids: list[str] = [row.id for row in await conn.execute(_ENDS[void_when_due], params)]
    if ids:
        await conn.execute(_LEASE, {"ids": ids, "until": until})
    return ids


_COUNTS = (
    select(
        _c.provider,
        func.count().filter(_c.capture_before > bindparam("now")).label("due"),
        func.count().filter(_c.capture_before <= bindparam("now")).label("past"),
    )
    .where(_c.status == HELD, _c.capture_before <= bindparam("due_by"))
    .group_by(_c.provider)
)


async def counts(conn: AsyncConnection, now: datetime, due_by: datetime) -> dict[str, tuple[int, int]]:
    """By provider: held payments lapsing by ``due_by`` (not yet past), and those past their
    capture_before still held."""
    rows = await conn.execute(_COUNTS, {"now": now, "due_by": due_by})
    return {row.provider: (int(row.due), int(row.past)) for row in rows}

