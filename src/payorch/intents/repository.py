"""All SQL of payment intents."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import payment_intents as intents

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
