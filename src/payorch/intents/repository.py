"""All SQL of payment intents."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import payments

# Built once: statements whose values come as parameters compile once and hit SQLAlchemy's cache
# without recomputing a cache key for every request (this is the hottest write path).
_INSERT = insert(intents)


async def insert_intent(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(_INSERT, values)


async def get(
    conn: AsyncConnection, application_id: str, intent_id: str, *, for_update: bool = False
) -> Row | None:  # type: ignore[type-arg]
    query = select(intents).where(
        intents.c.id == intent_id, intents.c.application_id == application_id
    )
    if for_update:
        query = query.with_for_update()  # a no-op on SQLite, whose BEGIN IMMEDIATE already serializes
    return (await conn.execute(query)).first()


# The intent with its payment (at most one: payments.payment_intent_id is unique), in one read.
_GET_WITH_PAYMENT = (
    select(
        intents,
        payments.c.id.label("payment_id"),
        payments.c.status.label("payment_status"),
        payments.c.authorization_code.label("payment_authorization_code"),
        payments.c.authorized_at.label("payment_authorized_at"),
    )
    .outerjoin(payments, payments.c.payment_intent_id == intents.c.id)
    .where(
        intents.c.id == bindparam("intent_id"),
        intents.c.application_id == bindparam("application_id"),
    )
)


async def get_with_payment(conn: AsyncConnection, application_id: str, intent_id: str) -> Row | None:  # type: ignore[type-arg]
    """The intent and its payment's columns (``payment_*``, None until a payment exists)."""
    result = await conn.execute(
        _GET_WITH_PAYMENT, {"intent_id": intent_id, "application_id": application_id}
    )
    return result.first()


async def get_any(conn: AsyncConnection, intent_id: str, *, for_update: bool = False) -> Row | None:  # type: ignore[type-arg]
    """By id alone: for provider returns and notifications, which carry no API key."""
    query = select(intents).where(intents.c.id == intent_id)
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def compare_and_set_status(
    conn: AsyncConnection,
    intent_id: str,
    *,
    expected: str,
    new: str,
    at: datetime,
    changes: dict[str, Any],
) -> bool:
    result = await conn.execute(
        update(intents)
        .where(intents.c.id == intent_id, intents.c.status == expected)
        .values(status=new, updated_at=at, **changes)
    )
    return result.rowcount == 1


async def status_of(conn: AsyncConnection, intent_id: str) -> str | None:
    return (
        await conn.execute(select(intents.c.status).where(intents.c.id == intent_id))
    ).scalar_one_or_none()
