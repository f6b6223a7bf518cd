"""All SQL of checkouts (and the worker's claims on them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import checkouts

ACTIVE = "ACTIVE"  # the intent's current checkout
REPLACED = "REPLACED"  # superseded by a newer checkout: can never move the intent
CLOSED = "CLOSED"  # the intent reached a final outcome through it


async def insert_checkout(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(checkouts).values(**values))


async def active_for_intent(conn: AsyncConnection, payment_intent_id: str) -> Row | None:  # type: ignore[type-arg]
    query = (
        select(checkouts)
        .where(checkouts.c.payment_intent_id == payment_intent_id, checkouts.c.status == ACTIVE)
        .order_by(checkouts.c.created_at.desc())
        .limit(1)
    )
    return (await conn.execute(query)).first()


async def get(conn: AsyncConnection, checkout_id: str) -> Row | None:  # type: ignore[type-arg]
    return (await conn.execute(select(checkouts).where(checkouts.c.id == checkout_id))).first()


async def replace(conn: AsyncConnection, checkout_id: str, at: datetime) -> bool:
    """ACTIVE -> REPLACED, compare-and-set: False if someone else replaced or closed it first."""
    result = await conn.execute(
        update(checkouts)
        .where(checkouts.c.id == checkout_id, checkouts.c.status == ACTIVE)
        .values(status=REPLACED, closed_at=at, next_check_at=None, lease_until=None)
    )
    return result.rowcount == 1


async def update_checkout(conn: AsyncConnection, checkout_id: str, **values: Any) -> None:
    await conn.execute(update(checkouts).where(checkouts.c.id == checkout_id).values(**values))


async def take_lease(
    conn: AsyncConnection, checkout_id: str, now: datetime, until: datetime
) -> bool:
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
    await conn.execute(
        update(checkouts).where(checkouts.c.id == checkout_id).values(lease_until=None)
    )


async def claim_due(
    conn: AsyncConnection,
    *,
    intent_statuses: tuple[str, ...],
    now: datetime,
    lease_until: datetime,
    limit: int,
    skip_locked: bool,
) -> list[Row]:  # type: ignore[type-arg]
    """Lease up to ``limit`` ACTIVE checkouts that are due, whose intent is in ``intent_statuses``.

    PostgreSQL: FOR UPDATE SKIP LOCKED, so several workers split the work without waiting on
    each other; SQLite's BEGIN IMMEDIATE already serializes the claim.
    """
    query = (
        select(checkouts.c.id)
        .join(intents, intents.c.id == checkouts.c.payment_intent_id)
        .where(
            checkouts.c.status == ACTIVE,
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
        .where(and_(checkouts.c.id.in_(ids)))
        .values(lease_until=lease_until, check_attempts=checkouts.c.check_attempts + 1)
    )
    return list((await conn.execute(select(checkouts).where(checkouts.c.id.in_(ids)))).all())


async def latest_for_intent(
    conn: AsyncConnection, payment_intent_id: str, provider: str
) -> Row | None:  # type: ignore[type-arg]
    query = (
        select(checkouts)
        .where(checkouts.c.payment_intent_id == payment_intent_id, checkouts.c.provider == provider)
        .order_by(checkouts.c.created_at.desc())
        .limit(1)
    )
    return (await conn.execute(query)).first()
