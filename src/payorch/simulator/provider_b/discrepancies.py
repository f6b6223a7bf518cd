"""Provider B's side of the discrepancy control (docs/simulator.md, "Discrepancies"). Amounts
come in the currency's minor units and are kept in hundredths, as B's own records are."""

from __future__ import annotations

import secrets
from decimal import Decimal

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.db.tables.simulator import simulator_b_payments as payments_table
from payorch.errors import ValidationFailed
from payorch.providers.provider_b.wire import to_major, to_minor
from payorch.simulator.discrepancies.records import Discrepancies, held_back
from payorch.simulator.provider_b import payments, repository
from payorch.simulator.provider_b.notify import NOTIFIER
from payorch.simulator.provider_b.records import SimBPayment
from payorch.simulator.provider_b.wire import SimBWireError, collector_of, hundredths


def _hundredths(amount: int, currency: str) -> int:
    try:
        return hundredths(to_major(amount, currency), currency=currency, field="amount")
    except (SimBWireError, ValueError):
        raise ValidationFailed(f"Provider B cannot hold {amount} in {currency}.") from None


silence = held_back(NOTIFIER.provider)


async def refund(conn: AsyncConnection, clock: Clock, owner: str, payment_id: str, amount: int | None) -> str:
    found = await repository.get_payment(conn, int(payment_id), owner=owner) if payment_id.isdigit() else None
    if found is None:
        raise ValidationFailed("Provider B has no payment for this payment intent.")
    data: dict[str, object] = {} if amount is None else {"amount": to_major(amount, found.currency_id)}
    try:
        made = await payments.refund(conn, clock, owner, payment_id, data, secrets.token_hex(16))
    except SimBWireError as refused:
        raise ValidationFailed(f"Provider B refused the refund: {refused.message}") from None
    return str(made.id)


async def change_amount(
    conn: AsyncConnection, owner: str, payment_id: str, amount: int | None, currency: str | None
) -> None:
    found = await repository.get_payment(conn, int(payment_id), owner=owner) if payment_id.isdigit() else None
    if found is None:
        raise ValidationFailed("Provider B has no payment for this payment intent.")
    shown = currency or found.currency_id
    # The same minor units in the new currency unless told otherwise: only what was asked differs.
    kept = to_minor(Decimal(found.amount_hundredths) / 100, found.currency_id) or 0
    values = {"currency_id": shown, "amount_hundredths": _hundredths(amount or kept, shown)}
    await conn.execute(update(payments_table).where(payments_table.c.id == found.id).values(**values))


async def orphan(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, amount: int, currency: str
) -> list[str]:
    """An approved payment made at B's console: no preference, no external reference."""
    now = clock.now()
    payment = SimBPayment(
        id=secrets.randbelow(9 * 10**10) + 10**10,
        owner=owner,
        preference_id="console",
        collector_id=collector_of(owner),
        merchant_order_id=secrets.randbelow(9 * 10**10) + 10**10,
        external_reference=None,
        description="console sale",
        status="approved",
        status_detail="accredited",
        payment_type_id="credit_card",
        payment_method_id="visa",
        currency_id=currency,
        amount_hundredths=_hundredths(amount, currency),
        refunded_hundredths=0,
        authorization_code=payments.authorization_code(),
        notification_url=None,
        date_created=now,
        date_approved=now,
        date_last_updated=now,
    )
    await repository.insert_payment(conn, payment)
    return [str(payment.id)]


DISCREPANCIES = Discrepancies(silence=silence, refund=refund, change_amount=change_amount, orphan=orphan)
