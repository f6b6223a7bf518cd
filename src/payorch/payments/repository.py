"""All SQL of payments."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments


async def insert_payment(conn: AsyncConnection, **values: Any) -> None:
    """Record a payment. The unique payment_intent_id makes a second authorization fail here."""
    await conn.execute(insert(payments).values(**values))


async def for_intent(conn: AsyncConnection, payment_intent_id: str) -> Row | None:  # type: ignore[type-arg]
    query = select(payments).where(payments.c.payment_intent_id == payment_intent_id)
    return (await conn.execute(query)).first()
