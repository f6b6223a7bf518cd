"""Simulated provider D as the simulator serves it (simulator/registry.py); the discrepancy control
names a payment by its pspReference or its session's id."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.errors import ValidationFailed
from payorch.jsontypes import JsonObject
from payorch.providers.provider_d.registration import REGISTRATION
from payorch.simulator import repository as shared
from payorch.simulator.discrepancies.records import Discrepancies, held_back
from payorch.simulator.market.records import MarketOutcome
from payorch.simulator.outbox.sender import after_commit
from payorch.simulator.provider_d import endpoints, repository, sessions, tables
from payorch.simulator.provider_d.notify import NOTIFIER
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import NAME, SimDError, owner_of
from payorch.simulator.simulated import Bought, BuyerReturn, Settlement, SimulatedProvider


async def _paid(conn: AsyncConnection, owner: str, reference: str) -> SimDSession:
    found = await repository.paid_by(conn, reference, owner)
    found = found or await repository.session_of(conn, reference, owner=owner, for_update=True)
    if found is None or found.psp is None:
        raise ValidationFailed("Provider D has no authorised payment for this reference.")
    return found


async def refund(conn: AsyncConnection, clock: Clock, owner: str, reference: str, amount: int | None) -> str:
    paid = await _paid(conn, owner, reference)
    value = paid.captured - paid.refunded if amount is None else amount
    merchant = paid.merchant_account
    body: JsonObject = {"merchantAccount": merchant, "amount": {"value": value, "currency": paid.currency}}
    try:
        answer, _ = await sessions.modify(conn, clock, "", owner, merchant, paid.psp or "", "refunds", body)
    except SimDError as refused:
        raise ValidationFailed(f"Provider D refused the refund: {refused}") from None
    if (await _paid(conn, owner, reference)).refunded == paid.refunded:
        raise ValidationFailed("Provider D refused the refund: nothing captured is left to refund.")
    return str(answer["pspReference"])


async def change_amount(
    conn: AsyncConnection, owner: str, reference: str, amount: int | None, currency: str | None
) -> None:
    paid = await _paid(conn, owner, reference)
    changed = replace(paid, amount=amount or paid.amount, currency=currency or paid.currency)
    await repository.save(conn, changed)


# The page's button for each market outcome ("pending": the buyer stays on the page).
_BUTTONS = {"approve": "approve", "decline": "reject", "give_up": "cancel"}


async def settle(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, payment_intent_id: str, outcome: str
) -> Settlement | None:
    """Nothing is left in process at D (its page has no pending outcome)."""
    return None


async def market_buy(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, intent: str, outcome: MarketOutcome
) -> Bought | None:
    """The buyer's button on the intent's active session, then the GET back to returnUrl."""
    now = clock.now()
    found = [s for s in await repository.sessions_for(conn, owner, intent) if s.status_at(now) == "active"]
    if not found:
        return None
    if outcome == "pending":
        return Bought(outcome, [found[0].id], None)
    decided = await sessions.decide(conn, clock, public_url, found[0].id, _BUTTONS[outcome])
    if decided is None or decided.back is None:
        return None
    references = [found[0].id] + ([decided.session.psp] if decided.session.psp else [])
    return Bought(
        outcome, references, BuyerReturn("GET", decided.back, {}), after_commit(NOTIFIER, decided.sent)
    )


SIMULATED = SimulatedProvider(
    registration=REGISTRATION,
    routers=(endpoints.router,),
    owner_of=owner_of,
    settle=settle,
    purge_public=shared.public_purge(tables.simulator_d_sessions),
    settles="nothing: its page leaves no payment in process",
    settle_references="none",
    market_buy=market_buy,
    discrepancies=Discrepancies(held_back(NAME), refund, change_amount, orphan=None),
    notifier=NOTIFIER,
    holds=sessions.LAPSES.holds(sessions.HOLD_DAYS),
)
