"""Provider B's payment in our vocabulary: which outcome a status means, whether a payment
belongs to a checkout, and which of an intent's payments speaks for it.
"""

from __future__ import annotations

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
from payorch.providers.provider_b import PROVIDER_B, wire
from payorch.providers.references import Claims

OUTCOME_OF_STATUS = {
    wire.APPROVED: PaymentOutcome.AUTHORIZED,
    # Later states of an approved payment: it was paid (refunds are tracked by the service;
    # a mediation or chargeback is a dispute on the payment, dispute_of).
    wire.REFUNDED: PaymentOutcome.AUTHORIZED,
    wire.CHARGED_BACK: PaymentOutcome.AUTHORIZED,
    wire.IN_MEDIATION: PaymentOutcome.AUTHORIZED,
    wire.PENDING: PaymentOutcome.PROCESSING,
    wire.IN_PROCESS: PaymentOutcome.PROCESSING,
    wire.AUTHORIZED: PaymentOutcome.PROCESSING,  # reserved, not captured
    wire.REJECTED: PaymentOutcome.FAILED,
    wire.CANCELLED: PaymentOutcome.CANCELLED,
}
# Which payment of an intent speaks for it when there are several (retries on one preference).
RANK = {
    PaymentOutcome.AUTHORIZED: 0,
    PaymentOutcome.PROCESSING: 1,
    PaymentOutcome.FAILED: 2,
    PaymentOutcome.CANCELLED: 3,
}
UNRANKED = 9


def rank(result: PaymentResult) -> int:
    return RANK.get(result.outcome, UNRANKED)


# A dispute state's place among the payment's statuses, for two reads of the same instant
# (date_last_updated orders them first). ``approved`` comes both before and after a dispute
# (paid, then a mediation won): it ranks first, so a tie never lets it end an open dispute.
DISPUTE_RANK = {wire.APPROVED: 0, wire.IN_MEDIATION: 1, wire.CHARGED_BACK: 2, wire.REFUNDED: 3}
CHARGEBACK_ENDED = 4


def dispute_of(payment: wire.ProviderBPayment) -> DisputeObservation | None:
    """What the payment says about a dispute after it was paid: ``in_mediation`` (the buyer
    opened one), ``charged_back`` with ``status_detail`` in_process (open), reimbursed (won) or
    settled (lost); ``refunded`` with ``bpp_refunded`` (by the buyer protection program) is a
    mediation lost; ``approved`` ends an open one as won, another ``refunded`` as lost. The provider has
    no dispute id: its order is the payment's ``date_last_updated``, then DISPUTE_RANK."""
    seen = f"{payment.status}/{payment.status_detail or ''}"
    rank = DISPUTE_RANK.get(payment.status, 0)
    state: DisputeState | None = None
    kind: str | None = None
    if payment.status == wire.IN_MEDIATION:
        state, kind = DisputeState.OPEN, "mediation"
    elif payment.status == wire.CHARGED_BACK:
        state = {"reimbursed": DisputeState.WON, "settled": DisputeState.LOST}.get(
            payment.status_detail or "", DisputeState.OPEN
        )
        kind = "chargeback"
        rank = rank if state is DisputeState.OPEN else CHARGEBACK_ENDED
    elif payment.status == wire.APPROVED:
        state = DisputeState.CLEARED
    elif payment.status == wire.REFUNDED and payment.status_detail == wire.BUYER_PROTECTION_REFUNDED:
        state, kind = DisputeState.LOST, "mediation"  # a mediation lost, even if its opening was never read
    elif payment.status == wire.REFUNDED:
        state = DisputeState.REVERSED
    if state is None:
        return None
    return DisputeObservation(state, kind, seen, observed_at=_utc(payment.date_last_updated), rank=rank)


def mismatch(payment: wire.ProviderBPayment, checkout: CheckoutRef) -> str | None:
    amount = payment.transaction_amount
    return Claims(
        "external_reference",
        payment.external_reference,
        payment.currency_id,
        wire.to_minor(amount, checkout.currency) if amount is not None else None,
        (payment.metadata or {}).get("checkout_id"),
    ).mismatch(checkout)


def details_of(payment: wire.ProviderBPayment) -> dict[str, object]:
    return {
        "payment_id": payment.id,
        "status": payment.status,
        "status_detail": payment.status_detail,
    }


def result_of(ctx: ConnectorContext, payment: wire.ProviderBPayment, currency: str) -> PaymentResult:
    outcome = OUTCOME_OF_STATUS.get(payment.status)
    if outcome is None:
        raise ProviderUnavailable(f"unknown payment status {payment.status!r}", provider=PROVIDER_B)
    amount = (
        wire.to_minor(payment.transaction_amount, currency)
        if payment.transaction_amount is not None
        else None
    )
    authorized_at = None
    if outcome is PaymentOutcome.AUTHORIZED:
        authorized_at = _utc(payment.date_approved) or ctx.clock.now()
    reason = None
    if outcome is not PaymentOutcome.AUTHORIZED:
        reason = f"{payment.status}" + (f" ({payment.status_detail})" if payment.status_detail else "")
    return PaymentResult(
        outcome=outcome,
        provider_payment_reference=payment.id,
        authorization_code=payment.authorization_code,
        amount=amount,
        currency=payment.currency_id,
        authorized_at=authorized_at,
        reason=reason,
        details=details_of(payment),
    )


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
