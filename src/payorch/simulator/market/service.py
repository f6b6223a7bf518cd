"""Rules of the market controls: every change is scoped to the calling sandbox application."""

from __future__ import annotations

import random

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.errors import ResourceNotFound
from payorch.simulator.controls.access import require_sandbox
from payorch.simulator.market import repository
from payorch.simulator.market.records import SimMarket
from payorch.simulator.market.schemas import Bought, BuyerReturnOut, BuyRequest, Market, MarketRequest
from payorch.simulator.registry import BY_NAME, SIMULATED
from payorch.simulator.simulated import AfterCommit

# Not a secret: a buyer's whim (random.SystemRandom would cost a system call per draw).
_CHANCE = random.Random()  # noqa: S311


def _shown(provider_id: str, market: SimMarket) -> Market:
    return Market(
        provider=provider_id,
        approve=market.approve,
        decline=market.decline,
        give_up=market.give_up,
        pending=market.pending,
    )


async def set_market(conn: AsyncConnection, clock: Clock, caller: Caller, request: MarketRequest) -> Market:
    require_sandbox(caller)
    simulated = BY_NAME[request.provider]
    approve, decline, give_up, pending = request.shares()
    market = SimMarket(
        owner=caller.application_id,
        provider=simulated.name,
        approve=approve,
        decline=decline,
        give_up=give_up,
        pending=pending,
        updated_at=clock.now(),
    )
    await repository.put_market(conn, market)
    return _shown(simulated.provider_id, market)


async def list_markets(conn: AsyncConnection, caller: Caller) -> list[Market]:
    require_sandbox(caller)
    markets = await repository.markets_of(conn, caller.application_id)
    return [_shown(s.provider_id, markets[s.name]) for s in SIMULATED if s.name in markets]


async def clear_market(conn: AsyncConnection, caller: Caller, provider: str) -> None:
    require_sandbox(caller)
    if not await repository.delete_market(conn, caller.application_id, BY_NAME[provider].name):
        raise ResourceNotFound("No market is set for this provider.")


async def buy(
    conn: AsyncConnection, clock: Clock, public_url: str, caller: Caller, request: BuyRequest
) -> tuple[Bought, AfterCommit | None]:
    """The buyer of the intent's open checkout, at a provider with a market, decides as that
    market's probabilities say. Answers what it did and where its browser goes back."""
    require_sandbox(caller)
    owner = caller.application_id
    markets = await repository.markets_of(conn, owner)
    for simulated in SIMULATED:
        market = markets.get(simulated.name)
        if market is None:
            continue
        outcome = market.draw(_CHANCE)
        intent_id = request.payment_intent_id
        bought = await simulated.market_buy(conn, clock, public_url, owner, intent_id, outcome)
        if bought is None:
            continue
        back = bought.back
        shown = None if back is None else BuyerReturnOut(method=back.method, url=back.url, fields=back.fields)
        answer = Bought(
            payment_intent_id=request.payment_intent_id,
            provider=simulated.provider_id,
            outcome=bought.outcome,
            references=bought.references,
            return_=shown,
        )
        return answer, bought.after_commit
    raise ResourceNotFound("No checkout of this payment intent is open at a provider with a market.")
