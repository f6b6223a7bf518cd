"""All SQL of provider A's simulated transactions (always scoped by owner)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.simulator import simulator_a_transactions as transactions


async def insert_transaction(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(insert(transactions).values(**values))


async def get(
    conn: AsyncConnection, token: str, *, owner: str | None = None, for_update: bool = False
) -> Row | None:  # type: ignore[type-arg]
    """By token; ``owner`` None only for the buyer's page, which carries no credentials."""
    query = select(transactions).where(transactions.c.token == token)
    if owner is not None:
        query = query.where(transactions.c.owner == owner)
    if for_update:
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def decide(conn: AsyncConnection, token: str, **values: Any) -> bool:
    """Record the buyer's choice once: False if the page was already answered."""
    result = await conn.execute(
        update(transactions)
        .where(transactions.c.token == token, transactions.c.outcome.is_(None))
        .values(**values)
    )
    return result.rowcount == 1


async def mark_committed(conn: AsyncConnection, token: str, **values: Any) -> bool:
    """Compare-and-set: exactly one commit per token, whatever races."""
    result = await conn.execute(
        update(transactions)
        .where(transactions.c.token == token, transactions.c.committed_at.is_(None))
        .values(**values)
    )
    return result.rowcount == 1


async def apply_refund(
    conn: AsyncConnection, token: str, before: int, after: int, status: str
) -> bool:
    result = await conn.execute(
        update(transactions)
        .where(transactions.c.token == token, transactions.c.nullified_amount == before)
        .values(nullified_amount=after, status=status)
    )
    return result.rowcount == 1


async def open_for_intent(conn: AsyncConnection, owner: str, payment_intent_id: str) -> list[Row]:  # type: ignore[type-arg]
    """Transactions whose return address is that intent's return handler (docs/simulator.md, Controls)."""
    rows = await conn.execute(
        select(transactions)
        .where(
            transactions.c.owner == owner,
            transactions.c.return_url.like(f"%/{payment_intent_id}"),
        )
        .order_by(transactions.c.created_at.desc())
    )
    return list(rows)


async def delete_older_than(
    conn: AsyncConnection, owner: str, before: datetime, limit: int
) -> int:
    """Delete up to ``limit`` of ``owner``'s transactions created before ``before``."""
    batch = (
        select(transactions.c.token)
        .where(transactions.c.owner == owner, transactions.c.created_at < before)
        .limit(limit)
    )
    result = await conn.execute(delete(transactions).where(transactions.c.token.in_(batch)))
    return result.rowcount
