"""All SQL of payments and their refunds."""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from sqlalchemy import ColumnElement, Select, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments
from payorch.db.tables.refunds import refunds
from payorch.payments.records import Payment, Refund

PENDING, SUCCEEDED, FAILED = "PENDING", "SUCCEEDED", "FAILED"


async def insert_payment(conn: AsyncConnection, payment: Payment) -> None:
    """Record a payment. The unique payment_intent_id makes a second authorization fail here."""
    await conn.execute(insert(payments), {name: getattr(payment, name) for name in payments.c.keys()})


async def for_intent(conn: AsyncConnection, payment_intent_id: str) -> Payment | None:
    query = select(payments).where(payments.c.payment_intent_id == payment_intent_id)
    return await _one(conn, query, Payment)


async def get(
    conn: AsyncConnection, application_id: str, payment_id: str, *, for_update: bool = False
) -> Payment | None:
    return await _find(
        conn,
        payments.c.id == payment_id,
        payments.c.application_id == application_id,
        for_update=for_update,
    )


async def get_any(
    conn: AsyncConnection, payment_id: str, *, for_update: bool = False
) -> Payment | None:
    """By id alone: for the worker, which has no caller."""
    return await _find(conn, payments.c.id == payment_id, for_update=for_update)


async def by_provider_reference(
    conn: AsyncConnection,
    application_id: str,
    provider: str,
    provider_reference: str,
    *,
    for_update: bool = False,
) -> Payment | None:
    """The application's payment the provider knows as ``provider_reference``."""
    return await _find(
        conn,
        payments.c.provider == provider,
        payments.c.provider_reference == provider_reference,
        payments.c.application_id == application_id,
        for_update=for_update,
    )


async def _find(
    conn: AsyncConnection, *conditions: ColumnElement[bool], for_update: bool
) -> Payment | None:
    query = select(payments).where(*conditions)
    if for_update:
        query = query.with_for_update()  # SQLite: BEGIN IMMEDIATE already serializes writers
    return await _one(conn, query, Payment)


async def set_dispute(
    conn: AsyncConnection,
    payment_id: str,
    status: str,
    kind: str | None,
    *,
    disputed_at: datetime | None = None,
    closed_at: datetime | None = None,
) -> None:
    """A dispute opens (``disputed_at``, clears an earlier end) or ends (``closed_at``)."""
    values: dict[str, object] = {"dispute_status": status, "dispute_kind": kind}
    if disputed_at is not None:
        values.update(disputed_at=disputed_at, dispute_closed_at=None)
    if closed_at is not None:
        values["dispute_closed_at"] = closed_at
    await conn.execute(update(payments).where(payments.c.id == payment_id).values(values))


async def page(
    conn: AsyncConnection,
    application_id: str,
    *,
    status: str | None,
    lowest_id: str | None,
    below_id: str | None,
    limit: int,
) -> list[Payment]:
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
    return [Payment(**row) for row in (await conn.execute(query)).mappings()]


async def set_refunded(
    conn: AsyncConnection, payment_id: str, *, refunded_amount: int, status: str
) -> None:
    await conn.execute(
        update(payments)
        .where(payments.c.id == payment_id)
        .values(refunded_amount=refunded_amount, status=status)
    )


_R = TypeVar("_R", Payment, Refund)


async def _one(
    conn: AsyncConnection, query: Select[*tuple[object, ...]], record: type[_R]
) -> _R | None:
    row = (await conn.execute(query)).mappings().first()
    return record(**row) if row is not None else None  # the record's fields are the columns


# --- refunds ---------------------------------------------------------------------------------


async def insert_refund(conn: AsyncConnection, refund: Refund) -> None:
    await conn.execute(insert(refunds), {name: getattr(refund, name) for name in refunds.c.keys()})


async def get_refund(
    conn: AsyncConnection, refund_id: str, *, for_update: bool = False
) -> Refund | None:
    query = select(refunds).where(refunds.c.id == refund_id)
    if for_update:
        query = query.with_for_update()
    return await _one(conn, query, Refund)


async def refund_by_key(conn: AsyncConnection, payment_id: str, key: str) -> Refund | None:
    query = select(refunds).where(
        refunds.c.payment_id == payment_id, refunds.c.idempotency_key == key
    )
    return await _one(conn, query, Refund)


async def pending_total(conn: AsyncConnection, payment_id: str) -> int:
    """What PENDING refunds have reserved: not yet refunded, no longer available."""
    query = select(func.coalesce(func.sum(refunds.c.amount), 0)).where(
        refunds.c.payment_id == payment_id, refunds.c.status == PENDING
    )
    return int((await conn.execute(query)).scalar_one())


async def refunds_of(conn: AsyncConnection, payment_id: str) -> list[Refund]:
    query = select(refunds).where(refunds.c.payment_id == payment_id).order_by(refunds.c.id.desc())
    return [Refund(**row) for row in (await conn.execute(query)).mappings()]


# A settled refund never changes again: each change below is a compare-and-set on PENDING.


async def mark_refund_succeeded(
    conn: AsyncConnection, refund_id: str, *, provider_refund_id: str | None, at: datetime
) -> bool:
    return await _change_pending(
        conn,
        refund_id,
        status=SUCCEEDED,
        provider_refund_id=provider_refund_id,
        next_check_at=None,
        updated_at=at,
    )


async def mark_refund_failed(
    conn: AsyncConnection, refund_id: str, *, failure_reason: str, at: datetime
) -> bool:
    return await _change_pending(
        conn,
        refund_id,
        status=FAILED,
        failure_reason=failure_reason,
        idempotency_key=None,  # the key is released: a retry with it runs again
        next_check_at=None,
        updated_at=at,
    )


async def postpone_refund_check(
    conn: AsyncConnection, refund_id: str, *, next_check_at: datetime, at: datetime
) -> bool:
    return await _change_pending(conn, refund_id, next_check_at=next_check_at, updated_at=at)


async def _change_pending(
    conn: AsyncConnection, refund_id: str, **values: str | datetime | None
) -> bool:
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
