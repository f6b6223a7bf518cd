"""Provider B's answers in payorch's payment error codes (providers/payment_errors.py): a
rejected or cancelled payment's ``status_detail`` (Mercado Pago, "Get payment status")."""

from __future__ import annotations

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode, ProviderError

C = PaymentErrorCode
# status_detail -> our code and the provider's documented meaning of it.
STATUS_DETAILS: dict[str, tuple[PaymentErrorCode, str]] = {
    "cc_rejected_insufficient_amount": (C.INSUFFICIENT_FUNDS, "The card has insufficient funds."),
    "cc_rejected_bad_filled_card_number": (C.INVALID_CARD_DETAILS, "Review the card number."),
    "cc_rejected_bad_filled_date": (C.INVALID_CARD_DETAILS, "Review the expiration date."),
    "cc_rejected_bad_filled_security_code": (C.INVALID_CARD_DETAILS, "Review the security code."),
    "cc_rejected_bad_filled_other": (C.INVALID_CARD_DETAILS, "Review the card's details."),
    "cc_rejected_high_risk": (C.FRAUD_SUSPECTED, "Rejected by the provider's fraud prevention."),
    "cc_rejected_blacklist": (C.FRAUD_SUSPECTED, "The card is on a block list."),
    "rejected_high_risk": (C.FRAUD_SUSPECTED, "Rejected by the provider's fraud prevention."),
    "cc_rejected_card_error": (C.PROVIDER_ERROR, "The card could not be processed."),
    "cc_rejected_call_for_authorize": (C.DECLINED, "The buyer must authorize the payment with the issuer."),
    "cc_rejected_card_disabled": (C.DECLINED, "The card is not active."),
    "cc_rejected_duplicated_payment": (C.DECLINED, "A payment of this amount was already made."),
    "cc_rejected_max_attempts": (C.DECLINED, "Too many attempts with this card."),
    "cc_rejected_invalid_installments": (C.DECLINED, "The card does not take these installments."),
    "cc_rejected_other_reason": (C.DECLINED, "The card issuer declined the payment."),
    "rejected_by_bank": (C.DECLINED, "The bank declined the payment."),
    # A cancelled payment: its time ran out, or the buyer left it.
    "expired": (C.EXPIRED, "The payment expired before it was paid."),
    "by_payer": (C.CANCELLED_BY_BUYER, "The buyer cancelled the payment."),
}

# Worth another try at another provider (docs/routing.md, "Which declines are retried"): the
# card could not be processed, and the issuer's or bank's refusal without a reason. Not funds,
# wrong details, risk, a disabled card, a duplicate or the provider's own attempt limit.
RETRYABLE = frozenset({"cc_rejected_card_error", "cc_rejected_other_reason", "rejected_by_bank"})


def payment_error(result: PaymentResult) -> ProviderError | None:
    detail = result.details.get("status_detail")
    status = result.details.get("status")
    if not isinstance(detail, str):
        return None
    known = STATUS_DETAILS.get(detail)
    if known is not None:
        return ProviderError(known[0], detail, known[1], retryable=detail in RETRYABLE)
    if result.outcome is PaymentOutcome.FAILED:
        return ProviderError(C.DECLINED, detail, f"Payment {status} ({detail}).")
    return None
