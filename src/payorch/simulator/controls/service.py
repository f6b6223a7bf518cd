"""Rules of the controls: every change is scoped to the calling sandbox application."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.errors import Forbidden, ResourceNotFound
from payorch.simulator import repository
from payorch.simulator.controls.schemas import (
    LONG_NAMES,
    PROVIDERS,
    Fault,
    Notified,
    NotifyRequest,
    Settled,
    SettleRequest,
)
from payorch.simulator.provider_a import service as provider_a
from payorch.simulator.provider_b import notify
from payorch.simulator.provider_b import payments as provider_b
from payorch.simulator.provider_b import repository as provider_b_repository
from payorch.simulator.provider_b.records import SimBNotification


def require_sandbox(caller: Caller) -> None:
    if not caller.is_sandbox:
        raise Forbidden("The simulator controls are for SANDBOX applications only.")


async def set_fault(
    conn: AsyncConnection, clock: Clock, caller: Caller, provider: str, mode: str
) -> Fault:
    require_sandbox(caller)
    short = PROVIDERS[provider]
    await repository.set_fault_mode(conn, caller.application_id, short, mode, clock.now())
    return Fault(provider=LONG_NAMES[short], mode=mode)


async def list_faults(conn: AsyncConnection, caller: Caller) -> list[Fault]:
    require_sandbox(caller)
    modes = await repository.fault_modes(conn, caller.application_id)
    return [
        Fault(provider=LONG_NAMES[s], mode=modes.get(s, "ok")) for s in ("provider_a", "provider_b")
    ]


async def settle(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    caller: Caller,
    request: SettleRequest,
) -> tuple[Settled, list[SimBNotification]]:
    """Move the intent's payments as ``request.outcome`` says: B's first (provider_b.TRANSITIONS),
    then, for approve / reject, A's open transaction. Returns the answer and B's notifications to
    send once this transaction commits."""
    require_sandbox(caller)
    owner = caller.application_id
    payment_intent_id, outcome = request.payment_intent_id, request.outcome
    only = PROVIDERS[request.provider] if request.provider else None
    if only in (None, "provider_b"):
        ids, notifications = await provider_b.settle(
            conn, clock, public_url, owner, payment_intent_id, outcome
        )
        if ids:
            answer = Settled(
                payment_intent_id=payment_intent_id,
                provider=LONG_NAMES["provider_b"],
                outcome=outcome,
                references=[str(i) for i in ids],
            )
            return answer, notifications
    if only in (None, "provider_a") and outcome in ("approve", "reject"):
        token = await provider_a.settle(conn, clock, owner, payment_intent_id, outcome)
        if token:
            answer = Settled(
                payment_intent_id=payment_intent_id,
                provider=LONG_NAMES["provider_a"],
                outcome=outcome,
                references=[token],
            )
            return answer, []
    raise ResourceNotFound(f"Nothing to {outcome} for this payment intent.")


async def notify_again(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    caller: Caller,
    request: NotifyRequest,
) -> tuple[Notified, list[SimBNotification]]:
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
    notifications: list[SimBNotification] = []
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
    ), notifications
