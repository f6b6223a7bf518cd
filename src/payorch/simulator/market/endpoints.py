"""HTTP of the market controls (docs/simulator.md, "The simulated market"): SANDBOX bearer keys."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.errors import AuthenticationFailed, Forbidden, ResourceNotFound, ValidationFailed
from payorch.http.deps import Conn, CurrentCaller, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.responses import json_response
from payorch.simulator.controls.moves import MOVE_PROBLEMS, moved
from payorch.simulator.controls.schemas import ProviderName
from payorch.simulator.market import service
from payorch.simulator.market.schemas import Bought, BuyRequest, Market, MarketList, MarketRequest

router = APIRouter(tags=["Simulator", "Simulator controls"])
MARKET = "/simulator/controls/market"


@router.post(
    MARKET,
    response_model=Market,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, Forbidden),
    summary="Let the simulator's buyer decide this application's checkouts at a provider",
    description="From now on `POST /simulator/controls/market/buy` decides this application's "
    "checkouts at the provider by itself: approve, decline, give_up or pending, each with its "
    "probability (they add up to 1). Replaces the provider's earlier market.",
)
async def set_market(body: MarketRequest, caller: CurrentCaller, request: Request, conn: Conn) -> Response:
    market = await service.set_market(conn, runtime_of(request).clock, caller, body)
    return json_response(market.model_dump())


@router.get(
    MARKET,
    response_model=MarketList,
    responses=problem_responses(AuthenticationFailed, Forbidden),
    summary="This application's markets",
)
async def list_markets(caller: CurrentCaller, conn: ReadConn) -> Response:
    markets = await service.list_markets(conn, caller)
    return json_response({"items": [m.model_dump() for m in markets]})


@router.delete(
    MARKET + "/providers/{provider}",  # not /{provider}: /market/buy would match it too
    status_code=204,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, Forbidden, ResourceNotFound),
    summary="Stop the market at a provider (its page waits for a click again)",
)
async def clear_market(provider: ProviderName, caller: CurrentCaller, conn: Conn) -> Response:
    await service.clear_market(conn, caller, provider)
    return Response(status_code=204)


@router.post(
    MARKET + "/buy",
    response_model=Bought,
    responses=MOVE_PROBLEMS,
    summary="The simulator's buyer decides a payment intent's open checkout",
    description="The intent's checkout still open at a provider with a market is decided as "
    "the market's probabilities say, as its page's buttons would (notifications are sent as "
    "usual); the answer says where the buyer's browser goes back to the shop.",
)
async def buy(body: BuyRequest, caller: CurrentCaller, request: Request) -> Response:
    return await moved(runtime_of(request), service.buy, caller, body)
