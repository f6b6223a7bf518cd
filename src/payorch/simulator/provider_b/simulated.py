"""Simulated provider B as the simulator serves it: its one registration (simulator/registry.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.providers.provider_b.registration import REGISTRATION
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.market.records import MarketOutcome
from payorch.simulator.outbox import sender
from payorch.simulator.pages import with_query
from payorch.simulator.provider_b import checkout, controls, endpoints, notify, page, payments, repository
from payorch.simulator.provider_b.credentials import owner_of
from payorch.simulator.provider_b.discrepancies import DISCREPANCIES
from payorch.simulator.simulated import Bought, BuyerReturn, Settlement, SimulatedProvider


async def settle(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    owner: str,
    payment_intent_id: str,
    outcome: str,
) -> Settlement | None:
    """Move the intent's payments as ``outcome`` says (payments.TRANSITIONS); a signed
    notification for each is sent once the move committed."""
    ids, written = await payments.settle(conn, clock, public_url, owner, payment_intent_id, outcome)
    if not ids:
        return None
    return Settlement([str(i) for i in ids], sender.after_commit(notify.NOTIFIER, written))


async def market_buy(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    owner: str,
    payment_intent_id: str,
    outcome: MarketOutcome,
) -> Bought | None:
    """The buyer presses the outcome's button on the intent's open checkout page and is sent
    back as the page sends it; the payment's notification goes once this commits."""
    preference = await checkout.open_preference(conn, clock, owner, payment_intent_id)
    if preference is None:
        return None
    choice = await checkout.choose(conn, clock, public_url, preference.id, checkout.MARKET_BUTTONS[outcome])
    if choice is None:
        return None
    url = checkout.back_url(preference, choice.payment)
    back = None
    if url is not None:
        back = BuyerReturn("GET", with_query(url, checkout.back_params(preference, choice.payment)), {})
    references = [str(choice.payment.id)] if choice.payment is not None else [preference.id]
    return Bought(outcome, references, back, sender.after_commit(notify.NOTIFIER, choice.notifications))


async def purge_public(conn: AsyncConnection, before: datetime, limit: int) -> int:
    # Preferences, payments, refunds and notifications together (few rows per payment).
    return await repository.delete_older_than(conn, PUBLIC_OWNER, before)


SIMULATED = SimulatedProvider(
    registration=REGISTRATION,
    routers=(page.router, endpoints.router),
    owner_of=owner_of,
    settle=settle,
    purge_public=purge_public,
    settles="its payments for the intent (external_reference) move as the outcome says "
    "(approve, reject, cancel while pending or in process; mediation, chargeback and their ends "
    "after the payment) and a signed notification is sent for each",
    settle_references="payment ids",
    market_buy=market_buy,
    discrepancies=DISCREPANCIES,
    notifier=notify.NOTIFIER,
    controls_routers=(controls.router,),
)
