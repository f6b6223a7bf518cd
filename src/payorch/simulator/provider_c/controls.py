"""The control only provider C has (docs/simulator.md, "Controls"): send the signed events
already sent about an intent's sessions again, duplicated and out of order, as the provider's
retries deliver them."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.errors import ResourceNotFound
from payorch.http.deps import CurrentCaller, runtime_of
from payorch.simulator.controls.access import require_sandbox
from payorch.simulator.controls.moves import MOVE_PROBLEMS, moved
from payorch.simulator.controls.resend import Copies, SendOrder
from payorch.simulator.outbox import sender
from payorch.simulator.provider_c import events, sessions
from payorch.simulator.simulated import AfterCommit

router = APIRouter(tags=["Simulator", "Simulator controls"])


class SendAgainRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    payment_intent_id: str = Field(min_length=1, max_length=64)
    copies: Copies = 1
    order: SendOrder = Field(
        "oldest_first", description="newest_first sends the latest event first."
    )


class SentAgain(BaseModel):
    payment_intent_id: str
    events: int = Field(description="How many deliveries were sent, in order.")
    event_ids: list[str] = Field(description="The events' ids (`evt_...`), in the order sent.")


@router.post(
    "/simulator/controls/provider_c/events",
    response_model=SentAgain,
    responses=MOVE_PROBLEMS,
    summary="Send provider C's events about an intent's sessions again",
    description="Every signed event already sent about the intent's Checkout Sessions, sent "
    "again now (the same event id and body, signed afresh): `copies` times each, oldest or "
    "newest first. What a reader of the session finds is its current state.",
)
async def send_again(body: SendAgainRequest, caller: CurrentCaller, request: Request) -> Response:
    return await moved(runtime_of(request), _send_again, caller, body)


async def _send_again(
    conn: AsyncConnection, clock: Clock, public_url: str, caller: Caller, request: SendAgainRequest
) -> tuple[SentAgain, AfterCommit | None]:
    require_sandbox(caller)
    written = await sessions.send_again(
        conn, clock, caller.application_id, request.payment_intent_id, request.copies
    )
    if not written:
        raise ResourceNotFound("No provider C event was sent for this payment intent.")
    if request.order == "newest_first":
        written.reverse()

    answer = SentAgain(
        payment_intent_id=request.payment_intent_id,
        events=len(written),
        event_ids=[str(event.body["id"]) for event in written],
    )
    return answer, sender.after_commit(events.NOTIFIER, written)
