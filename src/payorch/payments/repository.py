"""All SQL of payments and their refunds."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments
from payorch.db.tables.refunds import refunds

PENDING, SUCCEEDED, FAILED = "PENDING", "SUCCEEDED", "FAILED"


async def insert_payment(conn: AsyncConnection, **values: Any) -> None:
    """Record a payment. The unique payment_intent_id makes a second authorization fail here."""
    await conn.execute(insert(payments).values(**values))


async def for_intent(conn: AsyncConnection, payment_intent_id: str) -> Row | None:  # type: ignore[type-arg]
    query = select(payments).where(payments.c.payment_intent_id == payment_intent_id)
    return (await conn.execute(query)).first()


async def get(
    conn: AsyncConnection, application_id: str, payment_id: str, *, for_update: bool = False
) -> Row | None:  # type: ignore[type-arg]
    query = select(payments).where(
        payments.c.id == payment_id, payments.c.application_id == application_id
    )
    if for_update:
        query = query.with_for_update()  # SQLite: BEGIN IMMEDIATE already serializes writers
    return (await conn.execute(query)).first()


async def get_any(
    conn: AsyncConnection, payment_id: str, *, for_update: bool = False
) -> Row | None:  # type: ignore[type-arg]
    """By id alone: for the worker, which has no caller."""
    query = select(payments).where(payments.c.id == payment_id)
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def page(
    conn: AsyncConnection,
    application_id: str,
    *,
    status: str | None,
    lowest_id: str | None,
    below_id: str | None,
    limit: int,
) -> list[Row]:  # type: ignore[type-arg]
    """Newest first, keyset: ``id < below_id`` on the (application_id[, status], id) index, so a
    page costs the same however many payments precede it. Ids are time-ordered."""
    query = select(payments).where(payments.c.application_id == application_id)
    if status is not None:
        query = query.where(payments.c.status == status)
    if lowest_id is not None:
        query = query.where(payments.c.id >= lowest_id)
    if below_id is not None:
        query = query.where(payments.c.id < below_id)
    query = query.order_by(payments.c.id.desc()).limit(limit)
    return list((await conn.execute(query)).all())


async def set_refunded(
    conn: AsyncConnection, payment_id: str, *, refunded_amount: int, status: str
) -> None:
    await conn.execute(
        update(payments)
        .where(payments.c.id == payment_id)
        .values(refunded_amount=refunded_amount, status=status)
    )


# --- refunds ---------------------------------------------------------------------------------


async def insert_refund(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(refunds).values(**values))


async def get_refund(
    conn: AsyncConnection, refund_id: str, *, for_update: bool = False
) -> Row | None:  # type: ignore[type-arg]
    query = select(refunds).where(refunds.c.id == refund_id)
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def refund_by_key(conn: AsyncConnection, payment_id: str, key: str) -> Row | None:  # type: ignore[type-arg]
    query = select(refunds).where(
        refunds.c.payment_id == payment_id, refunds.c.idempotency_key == key
    )
    return (await conn.execute(query)).first()


async def pending_total(conn: AsyncConnection, payment_id: str) -> int:
    """What PENDING refunds have reserved: not yet refunded, no longer available."""
    query = select(func.coalesce(func.sum(refunds.c.amount), 0)).where(
        refunds.c.payment_id == payment_id, refunds.c.status == PENDING
    )
    return int((await conn.execute(query)).scalar_one())


async def refunds_of(conn: AsyncConnection, payment_id: str) -> list[Row]:  # type: ignore[type-arg]
    query = select(refunds).where(refunds.c.payment_id == payment_id).order_by(refunds.c.id.desc())
    return list((await conn.execute(query)).all())


async def update_refund(conn: AsyncConnection, refund_id: str, **values: Any) -> bool:
    """Change a PENDING refund (compare-and-set: a settled refund never changes again)."""
    result = await conn.execute(
        update(refunds)
        .where(refunds.c.id == refund_id, refunds.c.status == PENDING)
        .values(**values)
    )
    return result.rowcount == 1


async def claim_due_refunds(
    conn: AsyncConnection, now: datetime, lease_until: datetime, batch: int
) -> list[str]:
    """PENDING refunds whose check is due; leased so that another worker skips them."""
    query = (
        select(refunds.c.id)
        .where(refunds.c.status == PENDING, refunds.c.next_check_at <= now)
        .order_by(refunds.c.next_check_at)
        .limit(batch)
        .with_for_update(skip_locked=True)
    )
    ids = list((await conn.execute(query)).scalars())
    if ids:
        await conn.execute(
            update(refunds)
            .where(refunds.c.id.in_(ids))
            .values(next_check_at=lease_until, checks=refunds.c.checks + 1)
        )
    return ids
