"""Disputes after the payment: a chargeback (the card issuer) or a mediation (the buyer, at the
provider). Recorded on the payment and emitted as ``payment.disputed`` and
``payment.dispute_closed`` (with the outcome); they never touch refund arithmetic.

What a provider notification says is never believed: the adapter reads the payment from the
provider and describes what it shows (``DisputeObservation``). Applying the same observation
twice changes nothing (duplicate notices): a dispute moves none -> OPEN -> WON | LOST, an end
already recorded is kept, and an end whose opening was never seen (a lost or late notice)
records the opening too. A new OPEN after an end is a new dispute (a chargeback after a won
mediation).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.events import service as events
from payorch.events.catalogue import PaymentDisputeClosed, PaymentDisputed
from payorch.payments import repository
from payorch.payments.records import Payment
from payorch.providers.base import DisputeObservation, DisputeState

OPEN, WON, LOST = "OPEN", "WON", "LOST"


def _ending(payment: Payment, seen: DisputeObservation) -> str | None:
    """WON / LOST when ``seen`` ends a dispute (the open one, or one never seen open)."""
    if seen.state in (DisputeState.WON, DisputeState.LOST):
        return seen.state.value
    if payment.dispute_status == OPEN and seen.state is DisputeState.CLEARED:
        return WON
    if payment.dispute_status == OPEN and seen.state is DisputeState.REVERSED:
        return LOST
    return None


async def observe(
    conn: AsyncConnection,
    clock: Clock,
    *,
    provider: str,
    provider_reference: str,
    application_id: str,
    seen: DisputeObservation,
) -> Payment | None:
    """Apply what the provider shows about the payment it knows as ``provider_reference``.
    None when payorch has no such payment (not authorized here, or another application's)."""
    payment = await repository.by_provider_reference(
        conn, application_id, provider, provider_reference, for_update=True
    )
    if payment is None:
        return None
    now = clock.now()
    kind = seen.kind or payment.dispute_kind
    if seen.state is DisputeState.OPEN:
        if payment.dispute_status != OPEN:  # a new dispute (also after an earlier one ended)
            await repository.set_dispute(conn, payment.id, OPEN, kind, disputed_at=now)
            await _emit(conn, now, payment, kind, seen)
        return await _reread(conn, payment)
    ending = _ending(payment, seen)
    if ending is None or payment.dispute_status in (WON, LOST):
        return payment  # nothing disputed, or this end is already recorded
    if payment.dispute_status is None:  # its opening was never seen (a lost or late notice)
        await repository.set_dispute(conn, payment.id, OPEN, kind, disputed_at=now)
        await _emit(conn, now, payment, kind, seen)
    await repository.set_dispute(conn, payment.id, ending, kind, closed_at=now)
    await _emit(conn, now, payment, kind, seen, ending)
    return await _reread(conn, payment)


async def _reread(conn: AsyncConnection, payment: Payment) -> Payment:
    fresh = await repository.get_any(conn, payment.id)
    assert fresh is not None  # locked above
    return fresh


async def _emit(
    conn: AsyncConnection,
    at: datetime,
    payment: Payment,
    kind: str | None,
    seen: DisputeObservation,
    outcome: str | None = None,
) -> None:
    """payment.disputed, or payment.dispute_closed when the dispute ended with ``outcome``."""
    opened = PaymentDisputed(
        payment_intent_id=payment.payment_intent_id,
        payment_id=payment.id,
        provider=payment.provider,
        kind=kind,
        provider_status=seen.provider_status,
    )
    payload = (
        opened
        if outcome is None
        else PaymentDisputeClosed(**opened.model_dump(), outcome="won" if outcome == WON else "lost")
    )
    await events.emit_payload(conn, application_id=payment.application_id, payload=payload, at=at)
