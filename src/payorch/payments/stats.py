"""Amounts taken and refunded per currency over a recent window (the dashboard's overview), and
the one SQL expression of the money a payment took (the exports' balances count it too)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments
from payorch.db.tables.refunds import refunds
from payorch.ids import lowest_id
from payorch.payments.repository import SUCCEEDED

# The money a payment took: all of it when captured at authorization; for a hold (capture_method
# manual), what was captured: 0 while held, voided or lapsed. A row written by a release before
# holds has amount_captured 0 and capture_method automatic (records.Payment.taken).
TAKEN: ColumnElement[int] = case(
    (payments.c.capture_method == "automatic", payments.c.amount), else_=payments.c.amount_captured
)


async def authorized_by_currency(
    conn: AsyncConnection, application_id: str, since: datetime
) -> dict[str, int]:
    query = (
        select(payments.c.currency, func.sum(TAKEN))
        # An id range on (application_id, id): payments are created when authorized.
        .where(payments.c.application_id == application_id, payments.c.id >= lowest_id("pay", _ms(since)))
        .group_by(payments.c.currency)
    )
    return {currency: int(total) for currency, total in (await conn.execute(query)).all()}


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


async def refunded_by_currency(conn: AsyncConnection, application_id: str, since: datetime) -> dict[str, int]:
    """Refunds that SUCCEEDED, created since ``since``."""
    query = (
        select(refunds.c.currency, func.sum(refunds.c.amount))
        .where(
            refunds.c.application_id == application_id,
            refunds.c.status == SUCCEEDED,
            refunds.c.id >= lowest_id("rfd", _ms(since)),  # the window on the primary key
        )
        .group_by(refunds.c.currency)
    )
    return {currency: int(total) for currency, total in (await conn.execute(query)).all()}
