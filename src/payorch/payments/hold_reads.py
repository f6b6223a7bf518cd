"""Reads of held payments for people's views (the dashboard's payments list and overview): which
intents of a page are held and until when, and the holds waiting for a capture, soonest first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments
from payorch.payments.hold_repository import HELD
from payorch.payments.records import Payment

_IS_HELD = payments.c.status == HELD


@dataclass(frozen=True, slots=True)
class HeldTotal:
    """The holds of one currency waiting for a capture: how many, and how much they hold."""

    currency: str
    count: int
    amount: int


async def deadlines(conn: AsyncConnection, application_id: str, intent_ids: list[str]) -> dict[str, datetime]:
    """``capture_before`` of each of ``intent_ids`` whose payment is held (a list page's ids)."""
    if not intent_ids:
        return {}
    query = select(payments.c.payment_intent_id, payments.c.capture_before).where(
        payments.c.application_id == application_id,
        payments.c.payment_intent_id.in_(intent_ids),
        _IS_HELD,
    )
    return {
        row.payment_intent_id: row.capture_before for row in await conn.execute(query) if row.capture_before
    }


async def soonest(conn: AsyncConnection, application_id: str, limit: int) -> list[Payment]:
    """The held payments whose hold lapses first (on the (application_id, status, id) index)."""
    query = (
        select(payments)
        .where(payments.c.application_id == application_id, _IS_HELD)
        .order_by(payments.c.capture_before, payments.c.id)
        .limit(limit)
    )
    return [Payment(**row) for row in (await conn.execute(query)).mappings()]


async def totals(conn: AsyncConnection, application_id: str) -> list[HeldTotal]:
    """Every hold waiting for a capture, per currency: what a capture may still take."""
    capturable = payments.c.amount - payments.c.amount_captured - payments.c.amount_released
    query = (
        select(payments.c.currency, func.count(), func.sum(capturable))
        .where(payments.c.application_id == application_id, _IS_HELD)
        .group_by(payments.c.currency)
        .order_by(payments.c.currency)
    )
    return [
        HeldTotal(currency, int(count), int(amount)) for currency, count, amount in await conn.execute(query)
    ]
