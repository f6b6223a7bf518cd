"""How a control that moves a simulated payment runs: the move (and the notifications it writes,
an outbox) commits first, then whatever it leaves to do after is done once the answer has gone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.background import BackgroundTask
from starlette.responses import Response

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.errors import AuthenticationFailed, Forbidden, ResourceNotFound, ValidationFailed
from payorch.http.errors import problem_responses
from payorch.http.responses import json_response
from payorch.runtime import Runtime
from payorch.simulator.simulated import AfterCommit

R = TypeVar("R", bound=BaseModel)
# (conn, clock, public_url, caller, request) -> (the answer, what to do after the commit).
Move = Callable[[AsyncConnection, Clock, str, Caller, R], Awaitable[tuple[BaseModel, AfterCommit | None]]]

# The answers besides success of the controls that move a simulated payment.
MOVE_PROBLEMS = problem_responses(ValidationFailed, AuthenticationFailed, Forbidden, ResourceNotFound)


async def moved(runtime: Runtime, move: Move[R], caller: Caller, body: R) -> Response:
    """Two phases: the move commits, then its answer goes and ``after`` runs behind it."""
    phases = runtime.phases
    async with phases.transaction() as conn:
        answer, after = await move(conn, runtime.clock, runtime.settings.public_url, caller, body)
    response = json_response(answer.model_dump(by_alias=True))
    if after is not None:
        response.background = BackgroundTask(after, runtime, phases)
    return response
