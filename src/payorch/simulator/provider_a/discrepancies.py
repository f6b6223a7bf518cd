"""Provider A's side of the discrepancy control (docs/simulator.md, "Discrepancies"): it sends
no notifications, charges CLP only, and payorch reads only the tokens it created, so an orphan
transaction could never be seen."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.db.tables.simulator import simulator_a_transactions as transactions
from payorch.errors import ValidationFailed
from payorch.simulator.discrepancies.records import Discrepancies
from payorch.simulator.provider_a import repository, service
from payorch.simulator.provider_a.wire import SimAWireError


async def silence(conn: AsyncConnection, owner: str, references: Sequence[str]) -> None:
    """Nothing to hold back: provider A never notifies."""


async def refund(conn: AsyncConnection, clock: Clock, owner: str, token: str, amount: int | None) -> str:
    found = await repository.get(conn, token, owner=owner)
    if found is None:
        raise ValidationFailed("Provider A has no transaction for this payment.")
    try:
        await service.refund(conn, clock, owner, token, amount or found.amount - found.nullified_amount)
    except SimAWireError as refused:
        raise ValidationFailed(f"Provider A refused the refund: {refused.message}") from None
    return token


async def change_amount(
    conn: AsyncConnection, owner: str, token: str, amount: int | None, currency: str | None
) -> None:
    if currency is not None and currency != "CLP":
        raise ValidationFailed("Provider A charges CLP only: its currency cannot change.")
    if amount is not None:
        await conn.execute(
            update(transactions)
            .where(transactions.c.token == token, transactions.c.owner == owner)
            .values(amount=amount)
        )


DISCREPANCIES = Discrepancies(silence=silence, refund=refund, change_amount=change_amount, orphan=None)
