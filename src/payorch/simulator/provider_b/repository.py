"""All SQL of provider B's simulated preferences, payments, refunds and notifications."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from sqlalchemy import Row, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import column_values
from payorch.db.tables.simulator import (
    simulator_b_notifications as notifications,
)
from payorch.db.tables.simulator import (
    simulator_b_payments as payments,
)
from payorch.db.tables.simulator import (
    simulator_b_preferences as preferences,
)
from payorch.db.tables.simulator import (
    simulator_b_refunds as refunds,
)
from payorch.simulator.provider_b.records import (
    CheckedPreference,
    SimBAttempt,
    SimBNotification,
    SimBPayment,
    SimBPreference,
    SimBRefund,
    SimBStatusChange,
)
from payorch.simulator.repository import owned

OPEN_STATUSES = ("pending", "in_process")

AnyRow = Row[tuple[object, ...]]


def _payment(row: AnyRow) -> SimBPayment:
    return SimBPayment(**row._mapping)


def _refund(row: AnyRow) -> SimBRefund:
    return SimBRefund(**row._mapping)


def _notification(row: AnyRow) -> SimBNotification:
    return SimBNotification(**row._mapping)


async def insert_preference(
    conn: AsyncConnection, preference_id: str, owner: str, checked: CheckedPreference, now: datetime
) -> None:
    await conn.execute(
        insert(preferences).values(
            id=preference_id, owner=owner, created_at=now, **column_values(checked)
        )
    )


async def get_preference(
    conn: AsyncConnection,
    preference_id: str,
    *,
    owner: str | None = None,
    for_update: bool = False,
) -> SimBPreference | None:
    key = preferences.c.id == preference_id
    return await owned(conn, SimBPreference, preferences, key, owner=owner, for_update=for_update)


async def update_preference(
    conn: AsyncConnection, preference_id: str, checked: CheckedPreference
) -> None:
    await conn.execute(
        update(preferences)
        .where(preferences.c.id == preference_id)
        .values(**column_values(checked))
    )


async def insert_payment(conn: AsyncConnection, payment: SimBPayment) -> None:
    await conn.execute(insert(payments).values(**asdict(payment)))


async def get_payment(
    conn: AsyncConnection, payment_id: int, *, owner: str | None = None, for_update: bool = False
) -> SimBPayment | None:
    key = payments.c.id == payment_id
    return await owned(conn, SimBPayment, payments, key, owner=owner, for_update=for_update)


async def payments_of_preference(conn: AsyncConnection, preference_id: str) -> list[SimBPayment]:
    rows = await conn.execute(
        select(payments)
        .where(payments.c.preference_id == preference_id)
        .order_by(payments.c.date_created)
    )
    return [_payment(row) for row in rows]


async def payments_for_reference(
    conn: AsyncConnection, owner: str, reference: str, statuses: tuple[str, ...] | None = None
) -> list[SimBPayment]:
    """The owner's payments carrying ``reference`` (only in ``statuses`` when given), oldest
    first, locked."""
    conditions = [payments.c.owner == owner, payments.c.external_reference == reference]
    if statuses is not None:
        conditions.append(payments.c.status.in_(statuses))
    rows = await conn.execute(
        select(payments).where(*conditions).order_by(payments.c.date_created).with_for_update()
    )
    return [_payment(row) for row in rows]


async def payments_of_merchant_order(
    conn: AsyncConnection, owner: str, merchant_order_id: int
) -> list[SimBPayment]:
    rows = await conn.execute(
        select(payments)
        .where(payments.c.owner == owner, payments.c.merchant_order_id == merchant_order_id)
        .order_by(payments.c.date_created)
    )
    return [_payment(row) for row in rows]


async def set_payment_status(
    conn: AsyncConnection, payment_id: int, expected: tuple[str, ...], change: SimBStatusChange
) -> bool:
    """Compare-and-set on the status, so two settlements cannot both apply."""
    values: dict[str, object] = {
        "status": change.status,
        "status_detail": change.status_detail,
        "date_last_updated": change.date_last_updated,
    }
    if change.date_approved is not None:
        values["date_approved"] = change.date_approved
    if change.authorization_code is not None:
        values["authorization_code"] = change.authorization_code
    if change.refunded_hundredths is not None:
        values["refunded_hundredths"] = change.refunded_hundredths
    result = await conn.execute(
        update(payments)
        .where(payments.c.id == payment_id, payments.c.status.in_(expected))
        .values(values)
    )
    return result.rowcount == 1


_SORTS = {
    "date_created": payments.c.date_created,
    "date_approved": payments.c.date_approved,
    "date_last_updated": payments.c.date_last_updated,
    "id": payments.c.id,
}


async def search_payments(
    conn: AsyncConnection,
    owner: str,
    filters: dict[str, str],
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
) -> tuple[int, list[SimBPayment]]:
    conditions = [payments.c.owner == owner]
    if "external_reference" in filters:
        conditions.append(payments.c.external_reference == filters["external_reference"])
    if "status" in filters:
        conditions.append(payments.c.status == filters["status"])
    if "id" in filters:
        conditions.append(payments.c.id == int(filters["id"]))
    total = (
        await conn.execute(select(func.count()).select_from(payments).where(*conditions))
    ).scalar_one()
    column = _SORTS.get(sort, payments.c.date_created)
    order = (
        [column.desc(), payments.c.id.desc()] if descending else [column.asc(), payments.c.id.asc()]
    )
    rows = await conn.execute(
        select(payments).where(*conditions).order_by(*order).limit(limit).offset(offset)
    )
    return int(total), [_payment(row) for row in rows]


async def insert_refund(conn: AsyncConnection, refund: SimBRefund) -> None:
    await conn.execute(insert(refunds).values(**asdict(refund)))


async def refund_by_key(conn: AsyncConnection, owner: str, key: str) -> SimBRefund | None:
    query = select(refunds).where(refunds.c.owner == owner, refunds.c.idempotency_key == key)
    row = (await conn.execute(query)).first()
    return _refund(row) if row is not None else None


async def refunds_of(conn: AsyncConnection, payment_id: int) -> list[SimBRefund]:
    rows = await conn.execute(
        select(refunds).where(refunds.c.payment_id == payment_id).order_by(refunds.c.id)
    )
    return [_refund(row) for row in rows]


async def insert_notification(conn: AsyncConnection, notification: SimBNotification) -> None:
    await conn.execute(insert(notifications).values(**asdict(notification)))


async def due_notifications(
    conn: AsyncConnection, now: datetime, limit: int
) -> list[tuple[str, datetime]]:
    """(id, next_attempt_at) of the PENDING notifications due by ``now``, oldest first."""
    rows = await conn.execute(
        select(notifications.c.id, notifications.c.next_attempt_at)
        .where(notifications.c.status == "PENDING", notifications.c.next_attempt_at <= now)
        .order_by(notifications.c.next_attempt_at)
        .limit(limit)
    )
    return [(row.id, row.next_attempt_at) for row in rows]


async def claim_notification(
    conn: AsyncConnection, notification_id: str, seen: datetime, until: datetime
) -> SimBNotification | None:
    """Take a due notification for one sender: compare-and-set on next_attempt_at (a lease)."""
    result = await conn.execute(
        update(notifications)
        .where(
            notifications.c.id == notification_id,
            notifications.c.status == "PENDING",
            notifications.c.next_attempt_at == seen,
        )
        .values(next_attempt_at=until)
    )
    if result.rowcount != 1:
        return None
    return await notification_of(conn, notification_id)


async def record_attempt(
    conn: AsyncConnection, notification_id: str, attempt: SimBAttempt
) -> None:
    values: dict[str, object] = {"attempts": attempt.attempts, "last_error": attempt.last_error}
    if attempt.status is not None:
        values["status"] = attempt.status
    if attempt.next_attempt_at is not None:
        values["next_attempt_at"] = attempt.next_attempt_at
    await conn.execute(
        update(notifications).where(notifications.c.id == notification_id).values(values)
    )


async def notification_of(conn: AsyncConnection, notification_id: str) -> SimBNotification | None:
    row = (
        await conn.execute(select(notifications).where(notifications.c.id == notification_id))
    ).first()
    return _notification(row) if row is not None else None


async def delete_older_than(conn: AsyncConnection, owner: str, before: datetime) -> int:
    """Delete ``owner``'s preferences, payments, refunds and notifications made before
    ``before`` (the public owner's purge); how many rows went."""
    gone = 0
    for table, made in (
        (notifications, notifications.c.created_at),
        (refunds, refunds.c.date_created),
        (payments, payments.c.date_created),
        (preferences, preferences.c.created_at),
    ):
        result = await conn.execute(delete(table).where(table.c.owner == owner, made < before))
        gone += result.rowcount
    return gone
