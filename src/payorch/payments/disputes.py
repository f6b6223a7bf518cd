"""Disputes after the payment: a chargeback (the card issuer) or a mediation (the buyer, at the
provider). Recorded on the payment and emitted as ``payment.disputed`` and
``payment.dispute_closed`` (with the outcome); they never touch refund arithmetic.

What a provider notification says is never believed: the adapter reads the payment (or the
dispute) from the provider and describes what it shows (``DisputeObservation``), with where
that read stands in the provider's own order. The rules (docs/decisions.md, "Disputes move
only forward"):

- **Only forward in the provider's order.** The payment keeps the order key of the newest
  observation applied (``dispute_reference``, ``dispute_observed_at``, ``dispute_rank``); an
  observation that is not newer changes nothing, so a read made before a later state and
  applied after it (two notices in flight, a slow read) can never undo that state. Newer means:
  for the same provider dispute id, a later status in the dispute's life (an end is final:
  one dispute per provider dispute id, never reopened); otherwise a later provider time (the
  payment's last update, or a dispute's opening), and at the same instant a later rank. A
  provider that gives neither id nor time is ordered by rank alone. A read its caller cannot
  order at all (``rank`` None) is applied as the provider's current word and leaves the
  stored order as it was.
- **Plainly paid again ends an open dispute as WON only when it is newer.** A payment read as
  approved (CLEARED) comes both before a dispute and after a won one; its rank is the lowest,
  so a read of the same instant never ends a dispute.
- **The provider is the authority.** A newer explicit end of the same dispute that differs
  from the one recorded replaces it (WON -> LOST, emitted again); an end of another dispute
  (another id, or another kind when the provider has no ids) whose opening was never seen
  records that opening too. A duplicate changes nothing.
- **A dispute moves none -> OPEN -> WON | LOST**; a new OPEN after an end is a new dispute (a
  chargeback after a won mediation); an end whose opening was never seen (a lost or late
  notice) records the opening too.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.events import service as events
from payorch.events.catalogue import PaymentDisputeClosed, PaymentDisputed, about
from payorch.intents import service as intents
from payorch.payments import repository
from payorch.payments.records import Payment
from payorch.providers.base import DisputeObservation, DisputeState

OPEN, WON, LOST = "OPEN", "WON", "LOST"
ENDS = (WON, LOST)


def _newer(payment: Payment, seen: DisputeObservation) -> bool:
    """Whether ``seen`` comes after the newest observation applied, in the provider's order."""
    if seen.rank is None or payment.dispute_rank is None:
        return True  # a read its caller could not order, or nothing seen yet
    if seen.reference is not None and seen.reference == payment.dispute_reference:
        return seen.rank > payment.dispute_rank  # one dispute: only forward in its life
    held_at, seen_at = payment.dispute_observed_at, seen.observed_at
    if held_at is not None and seen_at is not None and held_at != seen_at:
        return seen_at > held_at
    if seen.reference is not None:  # another dispute, opened in the same second (or undated)
        # Only its opening after an end can be newer (the provider opens one only after the last
        # ended); an end read of it may be the earlier dispute's, sent again.
        return payment.dispute_status in ENDS and seen.state is DisputeState.OPEN
    return seen.rank > payment.dispute_rank


def _another(payment: Payment, seen: DisputeObservation) -> bool:
    """Whether ``seen`` is about another dispute than the one recorded on the payment."""
    if seen.reference is not None:
        return seen.reference != payment.dispute_reference
    return seen.kind is not None and payment.dispute_kind is not None and seen.kind != payment.dispute_kind


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
    """Apply what the provider shows about the payment it knows as ``provider_reference``, if
    it is newer than what was applied. None when payorch has no such payment (not authorized
    here, or another application's)."""
    payment = await repository.by_provider_reference(
        conn, application_id, provider, provider_reference, for_update=True
    )
    if payment is None:
        return None
    if not _newer(payment, seen):
        return payment  # an older read than one already applied: it changes nothing
    if seen.rank is not None:  # an unordered read leaves the order it found
        await repository.set_dispute_order(conn, payment.id, seen.reference, seen.observed_at, seen.rank)
    now = clock.now()
    kind = seen.kind or payment.dispute_kind
    if seen.state is DisputeState.OPEN:
        if payment.dispute_status != OPEN:  # a new dispute (also after an earlier one ended)
            await repository.set_dispute(conn, payment.id, OPEN, kind, disputed_at=now)
            await _emit(conn, now, payment, kind, seen)
        return await _reread(conn, payment)
    ending = _ending(payment, seen)
    if ending is None or (payment.dispute_status == ending and not _another(payment, seen)):
        return await _reread(conn, payment)  # nothing disputed, or this end is already recorded
    if payment.dispute_status is None or (payment.dispute_status in ENDS and _another(payment, seen)):
        # A dispute whose opening was never seen (a lost or late notice): record it first.
        await repository.set_dispute(conn, payment.id, OPEN, kind, disputed_at=now)
        await _emit(conn, now, payment, kind, seen)
    # Closes the open dispute, or corrects the end of this one: the newer read is the authority.
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
    intent = await intents.find_intent(conn, payment.payment_intent_id)
    assert intent is not None  # a payment's intent always exists (foreign key)
    opened = PaymentDisputed(
        **about(intent),
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
