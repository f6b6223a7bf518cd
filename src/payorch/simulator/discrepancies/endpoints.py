"""HTTP of the discrepancy control (docs/simulator.md, "Discrepancies"): SANDBOX bearer keys."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.http.deps import CurrentCaller, runtime_of
from payorch.simulator.controls.moves import MOVE_PROBLEMS, moved
from payorch.simulator.discrepancies import service
from payorch.simulator.discrepancies.schemas import DiscrepancyMade, DiscrepancyRequest

router = APIRouter(tags=["Simulator", "Simulator controls"])


@router.post(
    "/simulator/controls/discrepancies",
    response_model=DiscrepancyMade,
    responses=MOVE_PROBLEMS,
    summary="Make a simulated provider disagree with payorch's books",
    description="For reconciliation tests and demos: the provider's own records change as the "
    "kind says and nothing is sent to payorch, which finds out only by reconciling the day "
    "(docs/reconciliation.md).",
)
async def make_discrepancy(body: DiscrepancyRequest, caller: CurrentCaller, request: Request) -> Response:
    return await moved(runtime_of(request), service.make, caller, body)
