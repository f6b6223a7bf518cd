"""Provider C's side of the discrepancy control (docs/simulator.md, "Discrepancies"): its
amounts are in the currency's minor unit, as payorch's are; its notices are signed events."""

from __future__ import annotations

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.errors import ValidationFailed
from payorch.simulator.discrepancies.records import Discrepancies, held_back
from payorch.simulator.provider_c import events, refunds, repository, sessions
from payorch.simulator.provider_c.tables import simulator_c_payment_intents as intents
from payorch.simulator.provider_c.wire import SimCWireError

silence = held_back(events.NOTIFIER.provider)  # references: session ids (what the market's buyer answers)


async def refund(conn: AsyncConnection, clock: Clock, owner: str, intent_id: str, amount: int | None) -> str:
    body: dict[str, object] = {"payment_intent": intent_id}
    if amount is not None:
        body["amount"] = str(amount)
    try:
        made = await refunds.create(conn, clock, owner, body)
    except SimCWireError as refused:
        raise ValidationFailed(f"Provider C refused the refund: {refused}") from None
    return made.id


async def change_amount(
    conn: AsyncConnection, owner: str, intent_id: str, amount: int | None, currency: str | None
) -> None:
    if await repository.intent_of(conn, intent_id, owner=owner) is None:
        raise ValidationFailed("Provider C has no PaymentIntent for this payment intent.")
    values: dict[str, object] = {}
    if amount is not None:
        values.update(amount=amount, amount_received=amount)
    if currency is not None:
        values["currency"] = currency.lower()  # as on the wire
    await conn.execute(update(intents).where(intents.c.id == intent_id).values(**values))


async def orphan(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, amount: int, currency: str
) -> list[str]:
    """A session made and paid at C with no client_reference_id (a console or payment link sale)."""
    line = {"price_data": {"currency": currency.lower(), "unit_amount": str(amount),
                           "product_data": {"name": "console sale"}}, "quantity": "1"}
    try:
        session = await sessions.create(
            conn, clock, owner, {"mode": "payment", "success_url": f"{public_url}/", "line_items": [line]}
        )
    except SimCWireError as refused:
        raise ValidationFailed(f"Provider C refused the session: {refused}") from None
    paid = await sessions.choose(conn, clock, public_url, session.id, "approve")
    await silence(conn, owner, [session.id])
    intent = paid.intent.id if paid is not None and paid.intent is not None else None
    return [session.id] + ([intent] if intent else [])


DISCREPANCIES = Discrepancies(silence=silence, refund=refund, change_amount=change_amount, orphan=orphan)
