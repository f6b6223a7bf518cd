"""All SQL of payment intents."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import payments
from payorch.intents.records import IntentPayment, PaymentIntent

# Built once: statements whose values come as parameters compile once and hit SQLAlchemy's cache
# without recomputing a cache key for every request (this is the hottest write path).
_INSERT = insert(intents)
_COLUMNS = tuple(intents.c.keys())  # the record's fields have the columns' names


async def insert_intent(conn: AsyncConnection, intent: PaymentIntent) -> None:
    await conn.execute(_INSERT, {name: getattr(intent, name) for name in _COLUMNS})


async def get(
    conn: AsyncConnection, application_id: str, intent_id: str, *, for_update: bool = False
) -> PaymentIntent | None:
    query = select(intents).where(
        intents.c.id == intent_id, intents.c.application_id == application_id
    )
    if for_update:
        query = query.with_for_update()  # a no-op on SQLite, whose BEGIN IMMEDIATE already serializes
    row = (await conn.execute(query)).mappings().first()
    return _intent(row) if row is not None else None


# The intent with its payment (at most one: payments.payment_intent_id is unique), in one read:
# the one read of another domain's table here, because the join is the point (GET of an intent).
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


async def get_with_payment(
    conn: AsyncConnection, application_id: str, intent_id: str
) -> tuple[PaymentIntent, IntentPayment | None] | None:
    """The intent and its payment (None until a payment exists)."""
    result = await conn.execute(
        _GET_WITH_PAYMENT, {"intent_id": intent_id, "application_id": application_id}
    )
    row = result.mappings().first()
    if row is None:
        return None
    payment = None
    if row["payment_id"] is not None:
        payment = IntentPayment(
            id=row["payment_id"],
            status=row["payment_status"],
            authorization_code=row["payment_authorization_code"],
            authorized_at=row["payment_authorized_at"],
        )
    return _intent(row), payment


async def get_any(
    conn: AsyncConnection, intent_id: str, *, for_update: bool = False
) -> PaymentIntent | None:
    """By id alone: for provider returns and notifications, which carry no API key."""
    query = select(intents).where(intents.c.id == intent_id)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return _intent(row) if row is not None else None


async def compare_and_set_status(
    conn: AsyncConnection,
    intent_id: str,
    *,
    expected: str,
    new: str,
    at: datetime,
    provider: str | None = None,
) -> bool:
    """Move the status if it still is ``expected``; ``provider``: also record the chosen one."""
    values: dict[str, object] = {"status": new, "updated_at": at}
    if provider is not None:
        values["provider"] = provider
    result = await conn.execute(
        update(intents).where(intents.c.id == intent_id, intents.c.status == expected).values(values)
    )
    return result.rowcount == 1


async def status_of(conn: AsyncConnection, intent_id: str) -> str | None:
    return (
        await conn.execute(select(intents.c.status).where(intents.c.id == intent_id))
    ).scalar_one_or_none()


def _intent(row: RowMapping) -> PaymentIntent:
    return PaymentIntent(**{name: row[name] for name in _COLUMNS})  # rows may carry more columns
