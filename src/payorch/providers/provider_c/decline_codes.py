"""Provider C's answers in payorch's payment error codes (providers/payment_errors.py): the
PaymentIntent's ``last_payment_error`` (Stripe's error codes and decline codes)."""

from __future__ import annotations

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode, ProviderError

C = PaymentErrorCode
# decline_code, else code -> our code. Anything else a card_error names is a decline.
CODES: dict[str, PaymentErrorCode] = {
    "insufficient_funds": C.INSUFFICIENT_FUNDS,
    "incorrect_number": C.INVALID_CARD_DETAILS,
    "invalid_number": C.INVALID_CARD_DETAILS,
    "incorrect_cvc": C.INVALID_CARD_DETAILS,
    "invalid_cvc": C.INVALID_CARD_DETAILS,
    "invalid_expiry_month": C.INVALID_CARD_DETAILS,
    "invalid_expiry_year": C.INVALID_CARD_DETAILS,
    "expired_card": C.INVALID_CARD_DETAILS,
    "fraudulent": C.FRAUD_SUSPECTED,
    "stolen_card": C.FRAUD_SUSPECTED,
    "lost_card": C.FRAUD_SUSPECTED,
    "pickup_card": C.FRAUD_SUSPECTED,
    "merchant_blacklist": C.FRAUD_SUSPECTED,
    "processing_error": C.PROVIDER_ERROR,
    "issuer_not_available": C.PROVIDER_ERROR,
    "try_again_later": C.PROVIDER_ERROR,
}
# Worth another try at another provider (docs/routing.md, "Which declines are retried"): Stripe's
# decline codes whose next step is "try again" or "contact the issuer" without a card problem.
RETRYABLE = frozenset(
    {
        "generic_decline",
        "do_not_honor",
        "processing_error",
        "issuer_not_available",
        "try_again_later",
        "reenter_transaction",
    }
)
# Error types that are the provider's own failure, whatever the code.
PROVIDER_TYPES = frozenset({"api_error", "processing_error"})
# Stripe's words for the codes the simulator and tests meet (its message, when sent, wins).
MEANINGS = {
    "generic_decline": "The card was declined for an unknown reason.",
    "insufficient_funds": "The card has insufficient funds to complete the purchase.",
    "processing_error": "An error occurred while processing the card.",
    "fraudulent": "The payment was declined because it was suspected to be fraudulent.",
}


def payment_error(result: PaymentResult) -> ProviderError | None:
    if result.outcome is not PaymentOutcome.FAILED:
        # An earlier attempt's decline stays on the PaymentIntent: a buyer who then left is
        # cancelled (or expired), not declined.
        return None
    details = result.details
    kind, code, decline = (details.get(f"last_payment_error_{k}") for k in ("type", "code", "decline_code"))
    named = decline if isinstance(decline, str) else code if isinstance(code, str) else None
    if named is None and not isinstance(kind, str):
        return None
    ours = CODES.get(named or "", C.DECLINED)
    if kind in PROVIDER_TYPES:
        ours = C.PROVIDER_ERROR
    message = details.get("last_payment_error_message")
    words = message if isinstance(message, str) else MEANINGS.get(named or "")
    retryable = kind in PROVIDER_TYPES or (named or "") in RETRYABLE
    return ProviderError(ours, named or str(kind), words, retryable=retryable)
