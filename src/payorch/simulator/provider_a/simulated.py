"""Simulated provider A as the simulator serves it: its one registration (simulator/registry.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.providers.provider_a.registration import REGISTRATION
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.market.records import MarketOutcome
from payorch.simulator.pages import with_query
from payorch.simulator.provider_a import endpoints, page, repository, service
from payorch.simulator.provider_a.credentials import owner_of
from payorch.simulator.provider_a.discrepancies import DISCREPANCIES
from payorch.simulator.provider_a.wire import HOLD_DAYS
from payorch.simulator.simulated import (
    Bought,
    BuyerReturn,
    Settlement,
    SimulatedHolds,
    SimulatedProvider,
)


async def settle(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    owner: str,
    payment_intent_id: str,
    outcome: str,
) -> Settlement | None:
    """approve / reject only: decide the intent's transaction still waiting for the buyer."""
    if outcome not in ("approve", "reject"):
        return None
    token = await service.settle(conn, clock, owner, payment_intent_id, outcome)
    return Settlement(references=[token]) if token else None


# The page's button for each market outcome; "pending" has none: its page has no "in process".
_BUTTONS = {"approve": "approve", "decline": "reject", "give_up": "cancel"}


async def market_buy(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    owner: str,
    payment_intent_id: str,
    outcome: MarketOutcome,
) -> Bought | None:
    """The buyer presses the outcome's button, then goes back as the page sends it; "pending":
    the buyer never comes back, the transaction waits until it expires."""
    found = await service.open_transaction(conn, owner, payment_intent_id)
    if found is None:
        return None
    if outcome == "pending":
        return Bought(outcome, [found.token], back=None)
    pressed = await service.decide(conn, clock, found.token, _BUTTONS[outcome])
    if pressed is None:
        return None
    decided = pressed.transaction
    fields = page.return_fields(decided)
    if decided.outcome == "cancel":  # an abort comes back as a POSTed form
        return Bought(outcome, [found.token], BuyerReturn("POST", decided.return_url, fields))
    return Bought(outcome, [found.token], BuyerReturn("GET", with_query(decided.return_url, fields), {}))


async def advance_holds(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, seconds: int
) -> Settlement:
    """The clock control: the owner's deferred authorizations ``seconds`` nearer their end;
    those past it lapse (nothing is sent: the provider notifies nobody)."""
    return Settlement(references=await service.advance_holds(conn, clock, owner, seconds))


async def purge_public(conn: AsyncConnection, before: datetime, limit: int) -> int:
    return await repository.delete_older_than(conn, PUBLIC_OWNER, before, limit)


SIMULATED = SimulatedProvider(
    registration=REGISTRATION,
    routers=(page.router, endpoints.router),
    owner_of=owner_of,
    settle=settle,
    purge_public=purge_public,
    settles="approve and reject only; the intent's transaction still waiting for the buyer is "
    "decided, so `status` (and a commit) shows the result",
    settle_references="tokens",
    market_buy=market_buy,
    discrepancies=DISCREPANCIES,
    holds=SimulatedHolds(advance=advance_holds, window_days=HOLD_DAYS),
)
