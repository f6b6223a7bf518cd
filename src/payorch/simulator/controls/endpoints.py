"""HTTP of the simulator controls (docs/simulator.md, "Controls"): SANDBOX bearer keys. A
provider's own controls are its simulator package's (SimulatedProvider.controls_routers)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.errors import AuthenticationFailed, Forbidden, ValidationFailed
from payorch.http.deps import Conn, CurrentCaller, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.responses import json_response
from payorch.simulator.controls import service
from payorch.simulator.controls.moves import MOVE_PROBLEMS, moved
from payorch.simulator.controls.schemas import (
    HOLDING,
    SETTLES,
    Clocked,
    ClockRequest,
    Fault,
    FaultList,
    FaultRequest,
    Settled,
    SettleRequest,
)

router = APIRouter(tags=["Simulator", "Simulator controls"])


@router.post(
    "/simulator/controls/faults",
    response_model=Fault,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, Forbidden),
    summary="Make a simulated provider fail for this application",
    description="From now on the simulated provider answers this application's API calls with "
    "HTTP 500 (`error`, nothing applied) or no answer within PAYORCH_PROVIDER_TIMEOUT_SECONDS "
    "(`timeout`: nothing applied, a 504 after the timeout + 1 s), until set back to `ok`.",
)
async def set_fault(body: FaultRequest, caller: CurrentCaller, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    fault = await service.set_fault(conn, runtime.clock, caller, body.provider, body.mode)
    return json_response(fault.model_dump())


@router.get(
    "/simulator/controls/faults",
    response_model=FaultList,
    responses=problem_responses(AuthenticationFailed, Forbidden),
    summary="This application's fault modes",
)
async def list_faults(caller: CurrentCaller, conn: ReadConn) -> Response:
    faults = await service.list_faults(conn, caller)
    return json_response({"items": [f.model_dump() for f in faults]})


@router.post(
    "/simulator/controls/settle",
    response_model=Settled,
    responses=MOVE_PROBLEMS,
    summary="Move a simulated payment: settle one left in process, or dispute one that was paid",
    description=SETTLES,
)
async def settle(body: SettleRequest, caller: CurrentCaller, request: Request) -> Response:
    return await moved(runtime_of(request), service.settle, caller, body)


@router.post(
    "/simulator/controls/clock",
    response_model=Clocked,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, Forbidden),
    summary="Move the clock of this application's simulated holds forward",
    description="Each hold this application has at a simulated provider that holds ("
    + HOLDING
    + ") comes `advance_seconds` nearer its end, as if that much time had passed for it; a hold "
    "then past its end lapses at once, as the provider lets it lapse (provider A: the "
    "transaction reads REVERSED and refuses capture; provider C: the PaymentIntent is canceled "
    "with `cancellation_reason` `automatic`, its charge expired, and `charge.expired` and "
    "`payment_intent.canceled` are sent). Nothing else moves: sessions, tokens and payorch's own "
    "clock keep theirs. `provider` names only providers that hold (another: 400).",
)
async def advance_clock(body: ClockRequest, caller: CurrentCaller, request: Request) -> Response:
    return await moved(runtime_of(request), service.advance_clock, caller, body)
