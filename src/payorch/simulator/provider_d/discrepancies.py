"""Provider D's side of the discrepancy control (docs/simulator.md): a payment named by its
pspReference or its session's id; a console refund sends no notification."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.errors import ValidationFailed
from payorch.jsontypes import JsonObject
from payorch.simulator.discrepancies.records import HELD_BACK, Discrepancies
from payorch.simulator.outbox import repository as outbox
from payorch.simulator.provider_d import payments, repository
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import NAME, SimDError


async def _paid(conn: AsyncConnection, owner: str, reference: str) -> SimDSession:
    found = await repository.paid_by(conn, reference, owner)
    found = found or await repository.session_of(conn, reference, owner=owner, for_update=True)
    if found is None or found.psp is None:
        raise ValidationFailed("Provider D has no authorised payment for this reference.")
    return found


async def silence(conn: AsyncConnection, owner: str, references: Sequence[str]) -> None:
    """``references``: session ids (what the market's buyer answers)."""
    await outbox.hold_back(conn, NAME, owner, references, HELD_BACK)


async def refund(conn: AsyncConnection, clock: Clock, owner: str, reference: str, amount: int | None) -> str:
    paid = await _paid(conn, owner, reference)
    value = paid.captured - paid.refunded if amount is None else amount
    merchant = paid.merchant_account
    body: JsonObject = {"merchantAccount": merchant, "amount": {"value": value, "currency": paid.currency}}
    try:
        done = await payments.modify(conn, clock, "", owner, merchant, paid.psp or "", "refunds", body)
    except SimDError as refused:
        raise ValidationFailed(f"Provider D refused the refund: {refused}") from None
    if (await _paid(conn, owner, reference)).refunded == paid.refunded:
        raise ValidationFailed("Provider D refused the refund: nothing captured is left to refund.")
    return str(done.body["pspReference"])


async def change_amount(
    conn: AsyncConnection, owner: str, reference: str, amount: int | None, currency: str | None
) -> None:
    paid = await _paid(conn, owner, reference)
    changed = replace(paid, amount=amount or paid.amount, currency=currency or paid.currency)
    await repository.save(conn, changed)


DISCREPANCIES = Discrepancies(silence=silence, refund=refund, change_amount=change_amount, orphan=None)
