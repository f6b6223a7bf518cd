"""All SQL of provider A's simulated transactions (always scoped by owner)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.simulator import simulator_a_transactions as transactions
from payorch.simulator.provider_a.records import SimADecision, SimATransaction
from payorch.simulator.provider_a.wire import SimACreateRequest
from payorch.simulator.repository import owned


def _transaction(row: Row[tuple[object, ...]]) -> SimATransaction:
    return SimATransaction(**row._mapping)


async def insert_transaction(
    conn: AsyncConnection, token: str, owner: str, request: SimACreateRequest, now: datetime
) -> None:
    await conn.execute(
        insert(transactions).values(
            token=token,
            owner=owner,
            buy_order=request.buy_order,
            session_id=request.session_id,
            amount=request.amount,
            return_url=request.return_url,
            created_at=now,
            status="INITIALIZED",
            nullified_amount=0,
        )
    )


async def get(
    conn: AsyncConnection, token: str, *, owner: str | None = None, for_update: bool = False
) -> SimATransaction | None:
    """By token; ``owner`` None only for the buyer's page, which carries no credentials."""
    key = transactions.c.token == token
    return await owned(conn, SimATransaction, transactions, key, owner=owner, for_update=for_update)


async def decide(
    conn: AsyncConnection, token: str, decision: SimADecision, decided_at: datetime
) -> bool:
    """Record the buyer's choice once: False if the page was already answered."""
    result = await conn.execute(
        update(transactions)
        .where(transactions.c.token == token, transactions.c.outcome.is_(None))
        .values(
            outcome=decision.outcome,
            status=decision.status,
            response_code=decision.response_code,
            authorization_code=decision.authorization_code,
            card_number=decision.card_number,
            payment_type_code=decision.payment_type_code,
            decided_at=decided_at,
        )
    )
    return result.rowcount == 1


async def mark_committed(conn: AsyncConnection, token: str, committed_at: datetime) -> bool:
    """Compare-and-set: exactly one commit per token, whatever races."""
    result = await conn.execute(
        update(transactions)
        .where(transactions.c.token == token, transactions.c.committed_at.is_(None))
        .values(committed_at=committed_at)
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


async def declines_of_order(
    conn: AsyncConnection, owner: str, buy_order: str, *, since: datetime
) -> int:
    """How many of ``owner``'s transactions for ``buy_order`` were declined since ``since``."""
    query = select(func.count()).where(
        transactions.c.owner == owner,
        transactions.c.buy_order == buy_order,
        transactions.c.outcome == "reject",
        transactions.c.decided_at >= since,
    )
    return int((await conn.execute(query)).scalar_one())


async def open_for_intent(
    conn: AsyncConnection, owner: str, payment_intent_id: str
) -> list[SimATransaction]:
    """Transactions whose return address is that intent's return handler (docs/simulator.md, "Controls")."""
    rows = await conn.execute(
        select(transactions)
        .where(
            transactions.c.owner == owner,
            transactions.c.return_url.like(f"%/{payment_intent_id}"),
        )
        .order_by(transactions.c.created_at.desc())
    )
    return [_transaction(row) for row in rows]


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
