"""Provider C's statuses in our vocabulary: what a checkout session, with its PaymentIntent,
means for a payment, and whether a session belongs to a checkout at all.

Every combination the provider can show maps to a move or to "undecided, ask again"
(PROCESSING / NOT_PAID); an unknown status is ProviderUnavailable, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    DisputeObservation,
    DisputeState,
    PaymentOutcome,
    PaymentResult,
    ProviderUnavailable,
)
from payorch.providers.provider_c import PROVIDER_C, wire
from payorch.providers.references import Claims

# An open session: nothing is paid yet. A declined attempt leaves the intent in
# requires_payment_method and the buyer may try again on the same page.
OPEN_OUTCOMES: Mapping[str | None, PaymentOutcome] = {
    None: PaymentOutcome.NOT_PAID,
    wire.REQUIRES_PAYMENT_METHOD: PaymentOutcome.NOT_PAID,
    wire.REQUIRES_CONFIRMATION: PaymentOutcome.NOT_PAID,
    wire.REQUIRES_ACTION: PaymentOutcome.PROCESSING,  # the buyer is authenticating: ask again
    wire.PROCESSING: PaymentOutcome.PROCESSING,
    wire.REQUIRES_CAPTURE: PaymentOutcome.PROCESSING,
    wire.SUCCEEDED: PaymentOutcome.AUTHORIZED,
    wire.CANCELED: PaymentOutcome.FAILED,
}
# A complete session: the buyer finished; the intent says how.
COMPLETE_OUTCOMES: Mapping[str | None, PaymentOutcome] = {
    wire.SUCCEEDED: PaymentOutcome.AUTHORIZED,
    wire.PROCESSING: PaymentOutcome.PROCESSING,  # an asynchronous method: settles later
    wire.REQUIRES_ACTION: PaymentOutcome.PROCESSING,
    wire.REQUIRES_CAPTURE: PaymentOutcome.HELD,  # manual capture: approved and held
    wire.REQUIRES_CONFIRMATION: PaymentOutcome.PROCESSING,
    # An asynchronous payment that failed after the session completed.
    wire.REQUIRES_PAYMENT_METHOD: PaymentOutcome.FAILED,
    wire.CANCELED: PaymentOutcome.FAILED,
    None: PaymentOutcome.PROCESSING,  # complete without an intent yet: ask again
}
# An expired session: whatever was tried did not pay (a late success still wins).
EXPIRED_OUTCOMES: Mapping[str | None, PaymentOutcome] = {
    None: PaymentOutcome.EXPIRED,
    wire.REQUIRES_PAYMENT_METHOD: PaymentOutcome.EXPIRED,
    wire.REQUIRES_CONFIRMATION: PaymentOutcome.EXPIRED,
    wire.REQUIRES_ACTION: PaymentOutcome.EXPIRED,
    wire.CANCELED: PaymentOutcome.EXPIRED,
    wire.PROCESSING: PaymentOutcome.PROCESSING,
    wire.REQUIRES_CAPTURE: PaymentOutcome.PROCESSING,
    wire.SUCCEEDED: PaymentOutcome.AUTHORIZED,
}
OUTCOMES: Mapping[str, Mapping[str | None, PaymentOutcome]] = {
    wire.OPEN: OPEN_OUTCOMES,
    wire.COMPLETE: COMPLETE_OUTCOMES,
    wire.EXPIRED: EXPIRED_OUTCOMES,
}


def intent_of(session: wire.CheckoutSession) -> wire.PaymentIntent | None:
    return session.payment_intent if isinstance(session.payment_intent, wire.PaymentIntent) else None


def mismatch(session: wire.CheckoutSession, checkout: CheckoutRef) -> str | None:
    """Why ``session`` is not the checkout's (None: it is)."""
    currency = (session.currency or "").upper()
    made_for = session.metadata.get("checkout_id")
    claims = Claims(
        "client_reference_id", session.client_reference_id, currency, session.amount_total, made_for
    )
    if distrust := claims.mismatch(checkout):
        return distrust
    intent = intent_of(session)
    if intent is not None and (
        intent.amount != checkout.amount or intent.currency.upper() != checkout.currency
    ):
        return "its payment's amount or currency differs"
    return None


def details_of(session: wire.CheckoutSession) -> dict[str, object]:
    intent = intent_of(session)
    details: dict[str, object] = {
        "session_id": session.id,
        "status": session.status,
        "payment_status": session.payment_status,
        "payment_intent_status": intent.status if intent else None,
    }
    failure = intent.last_payment_error if intent else None
    if failure is not None:  # read by decline_codes (last_payment_error on the intent)
        details.update({f"last_payment_error_{k}": v for k, v in failure.model_dump().items()})
    return details


def result_of(ctx: ConnectorContext, session: wire.CheckoutSession) -> PaymentResult:
    """The session's meaning, once ``mismatch`` found it the checkout's."""
    intent = intent_of(session)
    table = OUTCOMES.get(session.status or "")
    intent_status = intent.status if intent else None
    outcome = table.get(intent_status) if table is not None else None
    if outcome is None:
        raise ProviderUnavailable(
            f"unknown session state {session.status!r}/{intent_status!r}", provider=PROVIDER_C
        )
    if outcome is PaymentOutcome.AUTHORIZED and (
        session.payment_status != wire.PAID or intent is None or intent.amount_received != intent.amount
    ):
        outcome = PaymentOutcome.PROCESSING  # succeeded but not yet shown paid: ask again
    if outcome is PaymentOutcome.HELD and (intent is None or intent.amount_capturable != intent.amount):
        outcome = PaymentOutcome.PROCESSING  # held, but not the whole amount shown: ask again
    held = outcome is PaymentOutcome.HELD
    authorized_at = None
    reason = None
    if outcome is PaymentOutcome.AUTHORIZED or held:
        authorized_at = ctx.clock.now()
    else:
        reason = f"session {session.status}, payment {session.payment_status}" + (
            f", intent {intent_status}" if intent_status else ""
        )
    return PaymentResult(
        outcome=outcome,
        provider_payment_reference=intent.id if intent else None,
        authorization_code=intent.latest_charge if intent and authorized_at is not None else None,
        amount=(intent.amount_capturable if held else intent.amount_received)
        if intent and authorized_at
        else None,
        currency=session.currency.upper() if session.currency else None,
        authorized_at=authorized_at,
        reason=reason,
        details=details_of(session),
    )


# A dispute's statuses in the order of its life: an inquiry (warning_*) may become a
# chargeback; an end is final. Reads of one dispute id apply only forward in this order.
DISPUTE_RANK = {
    "warning_needs_response": 1,
    "warning_under_review": 2,
    "needs_response": 3,
    "under_review": 4,
    wire.DISPUTE_WON: 5,
    wire.DISPUTE_LOST: 5,
    wire.DISPUTE_WARNING_CLOSED: 5,
}


def dispute_of(dispute: wire.Dispute) -> DisputeObservation:
    """What the dispute, as read from the provider, says: open (an inquiry or a chargeback under
    way), won, lost, or an inquiry that ended without a chargeback (ends an open one as won),
    with its id, its opening time and its status's rank (the provider's order).
    An unknown status is ProviderUnavailable, never a guess."""
    seen = f"dispute {dispute.status}"
    if dispute.status in wire.DISPUTE_OPEN:
        state, kind = DisputeState.OPEN, "chargeback"
    elif dispute.status == wire.DISPUTE_WON:
        state, kind = DisputeState.WON, "chargeback"
    elif dispute.status == wire.DISPUTE_LOST:
        state, kind = DisputeState.LOST, "chargeback"
    elif dispute.status == wire.DISPUTE_WARNING_CLOSED:
        state, kind = DisputeState.CLEARED, None
    else:
        raise ProviderUnavailable(f"unknown dispute status {dispute.status!r}", provider=PROVIDER_C)
    opened = utc(dispute.created) if dispute.created is not None else None
    return DisputeObservation(
        state, kind, seen, reference=dispute.id, observed_at=opened, rank=DISPUTE_RANK[dispute.status]
    )


def utc(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
