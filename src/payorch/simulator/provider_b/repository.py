"""All SQL of provider B's simulated preferences, payments, refunds and notifications."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

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

OPEN_STATUSES = ("pending", "in_process")


async def insert_preference(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(preferences).values(**values))


async def get_preference(
    conn: AsyncConnection,
    preference_id: str,
    *,
    owner: str | None = None,
    for_update: bool = False,
) -> Row | None:  # type: ignore[type-arg]
    query = select(preferences).where(preferences.c.id == preference_id)
    if owner is not None:
        query = query.where(preferences.c.owner == owner)
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def update_preference(conn: AsyncConnection, preference_id: str, **values: Any) -> None:
    await conn.execute(
        update(preferences).where(preferences.c.id == preference_id).values(**values)
    )


async def insert_payment(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(payments).values(**values))


async def get_payment(
    conn: AsyncConnection, payment_id: int, *, owner: str | None = None, for_update: bool = False
) -> Row | None:  # type: ignore[type-arg]
    query = select(payments).where(payments.c.id == payment_id)
    if owner is not None:
        query = query.where(payments.c.owner == owner)
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def payments_of_preference(conn: AsyncConnection, preference_id: str) -> list[Row]:  # type: ignore[type-arg]
    rows = await conn.execute(
        select(payments)
        .where(payments.c.preference_id == preference_id)
        .order_by(payments.c.date_created)
    )
    return list(rows)


async def open_payments_for_reference(
    conn: AsyncConnection, owner: str, reference: str
) -> list[Row]:  # type: ignore[type-arg]
    rows = await conn.execute(
        select(payments)
        .where(
            payments.c.owner == owner,
            payments.c.external_reference == reference,
            payments.c.status.in_(OPEN_STATUSES),
        )
        .order_by(payments.c.date_created.desc())
        .with_for_update()
    )
    return list(rows)


async def set_payment_status(
    conn: AsyncConnection, payment_id: int, expected: tuple[str, ...], **values: Any
) -> bool:
    """Compare-and-set on the status, so two settlements cannot both apply."""
    result = await conn.execute(
        update(payments)
        .where(payments.c.id == payment_id, payments.c.status.in_(expected))
        .values(**values)
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
) -> tuple[int, list[Row]]:  # type: ignore[type-arg]
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
    return int(total), list(rows)


async def insert_refund(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(refunds).values(**values))


async def refund_by_key(conn: AsyncConnection, owner: str, key: str) -> Row | None:  # type: ignore[type-arg]
    query = select(refunds).where(refunds.c.owner == owner, refunds.c.idempotency_key == key)
    return (await conn.execute(query)).first()


async def refunds_of(conn: AsyncConnection, payment_id: int) -> list[Row]:  # type: ignore[type-arg]
    rows = await conn.execute(
        select(refunds).where(refunds.c.payment_id == payment_id).order_by(refunds.c.id)
    )
    return list(rows)


async def insert_notification(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(notifications).values(**values))


async def due_notifications(conn: AsyncConnection, now: datetime, limit: int) -> list[Row]:  # type: ignore[type-arg]
    rows = await conn.execute(
        select(notifications.c.id, notifications.c.next_attempt_at)
        .where(notifications.c.status == "PENDING", notifications.c.next_attempt_at <= now)
        .order_by(notifications.c.next_attempt_at)
        .limit(limit)
    )
    return list(rows)


async def claim_notification(
    conn: AsyncConnection, notification_id: str, seen: datetime, until: datetime
) -> Row | None:  # type: ignore[type-arg]
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
    return (
        await conn.execute(select(notifications).where(notifications.c.id == notification_id))
    ).first()


async def record_attempt(conn: AsyncConnection, notification_id: str, **values: Any) -> None:
    await conn.execute(
        update(notifications).where(notifications.c.id == notification_id).values(**values)
    )


async def notification_of(conn: AsyncConnection, notification_id: str) -> Row | None:  # type: ignore[type-arg]
    return (
        await conn.execute(select(notifications).where(notifications.c.id == notification_id))
    ).first()
