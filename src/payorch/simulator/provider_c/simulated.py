"""Simulated provider C as the simulator serves it: its one registration (simulator/registry.py)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.providers.provider_c.registration import REGISTRATION
from payorch.simulator.market.records import MarketOutcome
from payorch.simulator.outbox.sender import after_commit
from payorch.simulator.provider_c import (
    controls,
    disputes,
    endpoints,
    holds,
    page,
    repository,
    sessions,
)
from payorch.simulator.provider_c.credentials import owner_of
from payorch.simulator.provider_c.discrepancies import DISCREPANCIES
from payorch.simulator.provider_c.events import NOTIFIER
from payorch.simulator.simulated import (
    Bought,
    BuyerReturn,
    Settlement,
    SimulatedProvider,
)

# The page's button for each market outcome but give_up (the buyer leaves by the cancel link).
_BUTTONS = {"approve": "approve", "decline": "pending", "pending": "pending"}


async def settle(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, payment_intent_id: str, outcome: str
) -> Settlement | None:
    """The processing payment of the intent's session succeeds (approve) or fails (reject), or a
    dispute on its paid one opens or closes; its signed event is sent once the move committed."""
    if outcome in disputes.OUTCOMES:
        disputed = await disputes.settle(conn, clock, public_url, owner, payment_intent_id, outcome)
        return None if disputed is None else Settlement([disputed[0].id], after_commit(NOTIFIER, disputed[1]))
    if outcome not in ("approve", "reject"):
        return None
    changed = await sessions.settle(conn, clock, public_url, owner, payment_intent_id, outcome)
    if changed is None or changed.intent is None:
        return None
    return Settlement([changed.intent.id], after_commit(NOTIFIER, changed.sent))


async def market_buy(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    owner: str,
    payment_intent_id: str,
    outcome: MarketOutcome,
) -> Bought | None:
    """The buyer's choice on the intent's open session, then the way back. A card declined on
    this page tells the shop nothing (the buyer may try again), so "decline" is the payment that
    fails after the buyer finished: left processing, then failed (async_payment_failed)."""
    now = clock.now()
    listed = await sessions.sessions_for(conn, owner, payment_intent_id)
    found = [s for s in listed if s.status_at(now) == "open"]
    if not found:
        return None
    session = found[0]
    if outcome == "give_up":
        back = BuyerReturn("GET", session.cancel_url, {}) if session.cancel_url else None
        return Bought(outcome, [session.id], back)
    chosen = await sessions.choose(conn, clock, public_url, session.id, _BUTTONS[outcome])
    if chosen is None:
        return None
    written = list(chosen.sent)
    if outcome == "decline":
        failed = await sessions.settle(conn, clock, public_url, owner, payment_intent_id, "reject")
        written += failed.sent if failed is not None else []
    back = BuyerReturn("GET", sessions.success_url(chosen.session), {})
    return Bought(outcome, [session.id], back, after_commit(NOTIFIER, written))


SIMULATED = SimulatedProvider(
    registration=REGISTRATION,
    routers=(page.router, endpoints.router),
    owner_of=owner_of,
    settle=settle,
    purge_public=repository.purge_public,
    settles="approve / reject: the PaymentIntent the buyer left `processing` on the intent's "
    "session succeeds or fails; chargeback opens a dispute on the paid one, chargeback_won / "
    "chargeback_lost close it; a signed event is sent for each",
    settle_references="PaymentIntent ids (approve, reject), dispute ids (chargeback...)",
    market_buy=market_buy,
    discrepancies=DISCREPANCIES,
    notifier=NOTIFIER,
    controls_routers=(controls.router,),
    holds=holds.LAPSES.holds(holds.HOLD_DAYS),
)
