"""All SQL of checkouts (and the worker's claims on them)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import Row, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.checkouts.records import Checkout, CheckoutStatus
from payorch.db.records import column_values, record_of
from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import checkouts


def _texts(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _checkout(row: Row[tuple[object, ...]]) -> Checkout:
    data = row._mapping
    return record_of(
        Checkout,
        data,
        status=CheckoutStatus(data["status"]),
        fields=_texts(data["fields"]),
        provider_data=_texts(data["provider_data"]),
    )


def _maybe(row: Row[tuple[object, ...]] | None) -> Checkout | None:
    return _checkout(row) if row is not None else None


async def insert_checkout(conn: AsyncConnection, checkout: Checkout) -> None:
    await conn.execute(insert(checkouts).values(column_values(checkout)))


async def active_for_intent(conn: AsyncConnection, payment_intent_id: str) -> Checkout | None:
    query = (
        select(checkouts)
        .where(
            checkouts.c.payment_intent_id == payment_intent_id,
            checkouts.c.status == CheckoutStatus.ACTIVE.value,
        )
        .order_by(checkouts.c.created_at.desc())
        .limit(1)
    )
    return _maybe((await conn.execute(query)).first())


async def for_intent(conn: AsyncConnection, payment_intent_id: str) -> list[Checkout]:
    """Every checkout of the intent, oldest first."""
    query = (
        select(checkouts)
        .where(checkouts.c.payment_intent_id == payment_intent_id)
        .order_by(checkouts.c.created_at, checkouts.c.id)
    )
    return [_checkout(row) for row in (await conn.execute(query)).all()]


async def get(conn: AsyncConnection, checkout_id: str) -> Checkout | None:
    query = select(checkouts).where(checkouts.c.id == checkout_id)
    return _maybe((await conn.execute(query)).first())


async def replace(conn: AsyncConnection, checkout_id: str, at: datetime) -> bool:
    """ACTIVE -> REPLACED, compare-and-set: False if someone else replaced or closed it first."""
    result = await conn.execute(
        update(checkouts)
        .where(checkouts.c.id == checkout_id, checkouts.c.status == CheckoutStatus.ACTIVE.value)
        .values(status=CheckoutStatus.REPLACED.value, closed_at=at, next_check_at=None, lease_until=None)
    )
    return result.rowcount == 1


async def record_result(
    conn: AsyncConnection,
    checkout_id: str,
    *,
    payment_reference: str | None,
    first_check_at: datetime | None,
    closed_at: datetime | None,
) -> None:
    """After a provider's answer, in one statement: remember the provider's payment reference
    (when given), schedule reconciliation from ``first_check_at`` (attempts start again), or
    close the checkout at ``closed_at`` (the intent reached a final outcome)."""
    values: dict[str, object] = {}
    if payment_reference:
        values["payment_reference"] = payment_reference
    if first_check_at is not None:
        values.update(next_check_at=first_check_at, check_attempts=0)
    if closed_at is not None:
        values.update(status=CheckoutStatus.CLOSED.value, closed_at=closed_at, next_check_at=None)
    if values:
        await conn.execute(update(checkouts).where(checkouts.c.id == checkout_id).values(values))


async def reschedule(conn: AsyncConnection, checkout_id: str, next_check_at: datetime) -> None:
    """Look at it again at ``next_check_at``, and free its lease."""
    await conn.execute(
        update(checkouts)
        .where(checkouts.c.id == checkout_id)
        .values(next_check_at=next_check_at, lease_until=None)
    )


async def stop_checking(conn: AsyncConnection, checkout_id: str) -> None:
    """No more looks by the worker (next_check_at cleared), lease freed; the checkout stays."""
    await conn.execute(
        update(checkouts)
        .where(checkouts.c.id == checkout_id)
        .values(next_check_at=None, lease_until=None)
    )


async def take_lease(conn: AsyncConnection, checkout_id: str, now: datetime, until: datetime) -> bool:
    """Claim the right to talk to the provider about this checkout (one actor at a time)."""
    result = await conn.execute(
        update(checkouts)
        .where(
            checkouts.c.id == checkout_id,
            or_(checkouts.c.lease_until.is_(None), checkouts.c.lease_until <= now),
        )
        .values(lease_until=until)
    )
    return result.rowcount == 1


async def release_lease(conn: AsyncConnection, checkout_id: str) -> None:
    await conn.execute(update(checkouts).where(checkouts.c.id == checkout_id).values(lease_until=None))


async def claim_due(
    conn: AsyncConnection,
    *,
    intent_statuses: tuple[str, ...],
    now: datetime,
    lease_until: datetime,
    limit: int,
    skip_locked: bool,
) -> list[Checkout]:
    """Lease up to ``limit`` ACTIVE checkouts that are due, whose intent is in ``intent_statuses``.

    PostgreSQL: FOR UPDATE SKIP LOCKED, so several workers split the work without waiting on
    each other; SQLite's BEGIN IMMEDIATE already serializes the claim.
    """
    query = (
        select(checkouts.c.id)
        # Reads payment_intents (the intents domain's table): the join is the point, so the
        # claim picks due checkouts by their intent's status in one locked statement.
        .join(intents, intents.c.id == checkouts.c.payment_intent_id)
        .where(
            checkouts.c.status == CheckoutStatus.ACTIVE.value,
            checkouts.c.next_check_at <= now,
            or_(checkouts.c.lease_until.is_(None), checkouts.c.lease_until <= now),
            intents.c.status.in_(intent_statuses),
        )
        .order_by(checkouts.c.next_check_at)
        .limit(limit)
    )
    if skip_locked:
        query = query.with_for_update(skip_locked=True, of=checkouts)
    ids = [row.id for row in (await conn.execute(query)).all()]
    if not ids:
        return []
    await conn.execute(
        update(checkouts)
        .where(checkouts.c.id.in_(ids))
        .values(lease_until=lease_until, check_attempts=checkouts.c.check_attempts + 1)
    )
    claimed = await conn.execute(select(checkouts).where(checkouts.c.id.in_(ids)))
    return [_checkout(row) for row in claimed]
