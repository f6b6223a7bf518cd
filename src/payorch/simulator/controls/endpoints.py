"""HTTP of the simulator controls (docs/simulator.md, "Controls"): SANDBOX bearer keys."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from fastapi import APIRouter, Request
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.background import BackgroundTask
from starlette.responses import Response

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.db import Phases
from payorch.errors import AuthenticationFailed, Forbidden, ResourceNotFound, ValidationFailed
from payorch.http.deps import Conn, CurrentCaller, ReadConn, runtime_of
from payorch.http.errors import problem_responses
from payorch.http.responses import json_response
from payorch.runtime import Runtime
from payorch.simulator.controls import service
from payorch.simulator.controls.schemas import (
    Fault,
    FaultList,
    FaultRequest,
    Notified,
    NotifyRequest,
    Settled,
    SettleRequest,
)
from payorch.simulator.provider_b import notify
from payorch.simulator.provider_b.records import SimBNotification

router = APIRouter(tags=["Simulator", "Simulator controls"])
# The answers besides success of the controls that move a simulated payment.
MOVE_PROBLEMS = problem_responses(ValidationFailed, AuthenticationFailed, Forbidden, ResourceNotFound)


@router.post(
    "/simulator/controls/faults",
    response_model=Fault,
    responses=problem_responses(ValidationFailed, AuthenticationFailed, Forbidden),
    summary="Make a simulated provider fail for this application",
    description="From now on the simulated provider answers this application's API calls with "
    "HTTP 500 (`error`, nothing applied) or no answer within PAYORCH_PROVIDER_TIMEOUT_SECONDS "
    "(`timeout`: nothing applied, a 504 after the timeout + 1 s), until set back to `ok`.",
)
async def set_fault(
    body: FaultRequest, caller: CurrentCaller, request: Request, conn: Conn
) -> Response:
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
    description="Provider B: its payments for the intent (external_reference) move as the "
    "outcome says (approve, reject, cancel while pending or in process; mediation, chargeback "
    "and their ends after the payment) and a signed notification is sent for each. Provider A "
    "(approve / reject only): the intent's transaction still waiting for the buyer is decided, "
    "so `status` (and a commit) shows the result.",
)
async def settle(
    body: SettleRequest, caller: CurrentCaller, request: Request
) -> Response:
    runtime = runtime_of(request)
    phases = runtime.phases
    return await _moved(runtime, phases, service.settle, caller, body)


@router.post(
    "/simulator/controls/notifications",
    response_model=Notified,
    responses=MOVE_PROBLEMS,
    summary="Send provider B's notices for an intent's payments again",
    description="Late, duplicated (`copies`), out of order (`newest_first`), in the older IPN "
    "style (`?topic=..&id=..`) or on the `merchant_order` topic: what real integrations "
    "receive. Each names a payment (or its merchant order); its current state is what a "
    "reader finds.",
)
async def notify_again(
    body: NotifyRequest, caller: CurrentCaller, request: Request
) -> Response:
    runtime = runtime_of(request)
    phases = runtime.phases
    return await _moved(runtime, phases, service.notify_again, caller, body)


R = TypeVar("R", bound=BaseModel)
Move = Callable[[AsyncConnection, Clock, str, Caller, R], Awaitable[tuple[BaseModel, list[SimBNotification]]]]


async def _moved(runtime: Runtime, phases: Phases, move: Move[R], caller: Caller, body: R) -> Response:
    """Two phases: the move (and its notifications, outbox) commits, then they are sent."""
    async with phases.transaction() as conn:
        answer, notifications = await move(conn, runtime.clock, runtime.settings.public_url, caller, body)
    return _then_send(answer, notifications, runtime, phases)


def _then_send(
    answer: BaseModel, notifications: list[SimBNotification], runtime: Runtime, phases: Phases
) -> Response:
    """The answer; the notifications written with it are sent once it has gone."""
    response = json_response(answer.model_dump())
    if notifications:
        response.background = BackgroundTask(notify.deliver_now, runtime, phases, notifications)
    return response
