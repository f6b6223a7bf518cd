"""All SQL of the outbox. Statements are built once, with bind parameters for the values; an
update's own parameters take a b_ prefix, as its table's column names are the SET clause's."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Integer, bindparam, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import column_values, record_of
from payorch.simulator.outbox.records import Attempt, Notification
from payorch.simulator.outbox.table import simulator_notifications as notifications

_INSERT = insert(notifications)


async def insert_notification(conn: AsyncConnection, notification: Notification) -> None:
    await conn.execute(_INSERT, column_values(notification))


_OF = select(notifications).where(notifications.c.id == bindparam("id"))


async def notification_of(conn: AsyncConnection, notification_id: str) -> Notification | None:
    row = (await conn.execute(_OF, {"id": notification_id})).mappings().first()
    return record_of(Notification, row) if row is not None else None


_OF_SUBJECT = (
    select(notifications)
    .where(
        notifications.c.provider == bindparam("provider"),
        notifications.c.owner == bindparam("owner"),
        notifications.c.subject == bindparam("subject"),
    )
    .order_by(notifications.c.created_at, notifications.c.id)
)


async def notifications_about(
    conn: AsyncConnection, provider: str, owner: str, subject: str
) -> list[Notification]:
    """Every delivery ``provider`` wrote about ``subject`` for ``owner``, oldest first."""
    rows = await conn.execute(_OF_SUBJECT, {"provider": provider, "owner": owner, "subject": subject})
    return [record_of(Notification, row) for row in rows.mappings()]


_DUE = (
    select(notifications.c.id, notifications.c.next_attempt_at)
    .where(
        notifications.c.status == "PENDING",
        notifications.c.next_attempt_at <= bindparam("now"),
        notifications.c.provider.in_(bindparam("providers", expanding=True)),
    )
    .order_by(notifications.c.next_attempt_at)
    .limit(bindparam("limit", type_=Integer))
)


async def due_notifications(
    conn: AsyncConnection, providers: Sequence[str], now: datetime, limit: int
) -> list[tuple[str, datetime]]:
    """(id, next_attempt_at) of the PENDING notifications of ``providers`` due by ``now``,
    oldest first."""
    rows = await conn.execute(_DUE, {"now": now, "limit": limit, "providers": list(providers)})
    return [(row.id, row.next_attempt_at) for row in rows]


_CLAIM = (
    update(notifications)
    .where(
        notifications.c.id == bindparam("b_id"),
        notifications.c.status == "PENDING",
        notifications.c.next_attempt_at == bindparam("b_seen"),
    )
    .values(next_attempt_at=bindparam("b_until"))
)


async def claim_notification(
    conn: AsyncConnection, notification_id: str, seen: datetime, until: datetime
) -> Notification | None:
    """Take a due notification for one sender: compare-and-set on next_attempt_at (a lease)."""
    result = await conn.execute(_CLAIM, {"b_id": notification_id, "b_seen": seen, "b_until": until})
    if result.rowcount != 1:
        return None
    return await notification_of(conn, notification_id)


# No values(): the SET clause is the columns named by the parameters.
_RECORD_ATTEMPT = update(notifications).where(notifications.c.id == bindparam("b_id"))


async def record_attempt(conn: AsyncConnection, notification_id: str, attempt: Attempt) -> None:
    values: dict[str, object] = {
        "b_id": notification_id,
        "attempts": attempt.attempts,
        "last_error": attempt.last_error,
    }
    if attempt.status is not None:
        values["status"] = attempt.status
    if attempt.next_attempt_at is not None:
        values["next_attempt_at"] = attempt.next_attempt_at
    await conn.execute(_RECORD_ATTEMPT, values)


_HOLD_BACK = (
    update(notifications)
    .where(
        notifications.c.provider == bindparam("b_provider"),
        notifications.c.owner == bindparam("b_owner"),
        notifications.c.subject.in_(bindparam("b_subjects", expanding=True)),
        notifications.c.status == "PENDING",
    )
    .values(status="GAVE_UP", last_error=bindparam("b_why"))
)


async def hold_back(
    conn: AsyncConnection, provider: str, owner: str, subjects: Sequence[str], why: str
) -> None:
    """Never send the pending notifications about ``subjects`` (the discrepancy control)."""
    await conn.execute(
        _HOLD_BACK,
        {"b_provider": provider, "b_owner": owner, "b_subjects": list(subjects), "b_why": why},
    )


_PURGE = delete(notifications).where(
    notifications.c.owner == bindparam("owner"), notifications.c.created_at < bindparam("before")
)


async def delete_older_than(conn: AsyncConnection, owner: str, before: datetime) -> int:
    """Delete ``owner``'s notifications made before ``before``; how many went."""
    return (await conn.execute(_PURGE, {"owner": owner, "before": before})).rowcount
