"""The control only provider B has (docs/simulator.md, "Controls"): send its notices for an
intent's payments again, late, duplicated, out of order or in the older IPN style."""

from __future__ import annotations

from typing import Literal

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
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_b import notify
from payorch.simulator.provider_b import repository as provider_b_repository
from payorch.simulator.simulated import AfterCommit

router = APIRouter(tags=["Simulator", "Simulator controls"])


class NotifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    payment_intent_id: str = Field(min_length=1, max_length=64)
    style: Literal["webhook", "ipn"] = Field(
        "webhook",
        description="webhook: `?data.id=..&type=..`, signed (x-signature); ipn: the older "
        "`?topic=..&id=..`, unsigned.",
    )
    topic: Literal["payment", "merchant_order"] = "payment"
    copies: Copies = 1
    order: SendOrder = Field(
        "oldest_first", description="newest_first sends the latest payment's notice first."
    )


class Notified(BaseModel):
    payment_intent_id: str
    notifications: int = Field(description="How many notices were sent, in order.")
    payment_ids: list[str] = Field(description="The provider B payments they name, in order.")


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
    return await moved(runtime_of(request), _notify_again, caller, body)


async def _notify_again(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    caller: Caller,
    request: NotifyRequest,
) -> tuple[Notified, AfterCommit | None]:
    """Provider B's notices for the intent's payments, again: duplicated, newest first, IPN
    style or merchant-order topic on request; sent once this transaction commits."""
    require_sandbox(caller)
    payments = await provider_b_repository.payments_for_reference(
        conn, caller.application_id, request.payment_intent_id
    )
    if not payments:
        raise ResourceNotFound("No provider B payment for this payment intent.")
    if request.order == "newest_first":
        payments.reverse()
    ids: list[str] = []
    notifications: list[Notification] = []
    for payment in payments:
        for _ in range(request.copies):
            sent = await notify.enqueue(
                conn,
                public_url,
                payment,
                "payment.updated",
                clock.now(),
                style=request.style,
                topic=request.topic,
            )
            if sent:
                notifications.append(sent)
                ids.append(str(payment.id))
    return Notified(
        payment_intent_id=request.payment_intent_id,
        notifications=len(notifications),
        payment_ids=ids,
    ), sender.after_commit(notify.NOTIFIER, notifications)
