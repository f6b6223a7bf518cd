"""Provider A's answers in payorch's payment error codes (providers/payment_errors.py).

The transaction's ``response_code`` says why the issuer refused a card (Webpay Plus REST 1.2,
"response_code"); a FAILED transaction without a card was never presented to an issuer, and
the ending the adapter confirmed with the status (abort, form timeout, error page) names it.
"""

from __future__ import annotations

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode, ProviderError

C = PaymentErrorCode
# response_code -> our code and the provider's documented meaning of it.
RESPONSE_CODES: dict[int, tuple[PaymentErrorCode, str]] = {
    -1: (C.DECLINED, "Rejected: possible error entering the transaction's data."),
    -2: (C.DECLINED, "Rejected: the transaction failed on the card's or its account's parameters."),
    -3: (C.PROVIDER_ERROR, "Rejected: error in the transaction."),
    -4: (C.DECLINED, "Rejected by the issuer."),
    -5: (C.FRAUD_SUSPECTED, "Rejected: transaction at risk of possible fraud."),
}
# Worth another try at another provider (docs/routing.md, "Which declines are retried"): an
# error in the transaction (-3) and the issuer's refusal without a reason (-4). Not the data the
# buyer entered (-1), the card's or account's parameters (-2) nor suspected fraud (-5).
RETRYABLE_RESPONSE_CODES = frozenset({-3, -4})
# The adapter's return shapes that end a payment without a card (adapter._unless_paid).
ENDINGS: dict[str, tuple[PaymentErrorCode, str]] = {
    "error": (C.PROVIDER_ERROR, "The payment form ended on the provider's error page."),
    "aborted": (C.CANCELLED_BY_BUYER, "The buyer aborted the payment form."),
    "timeout": (C.EXPIRED, "The payment form timed out."),
}


def payment_error(result: PaymentResult) -> ProviderError | None:
    details = result.details
    code = details.get("response_code")
    if result.outcome is PaymentOutcome.FAILED and details.get("card_last4") and isinstance(code, int):
        ours, meaning = RESPONSE_CODES.get(code, (C.DECLINED, f"Rejected (response_code {code})."))
        return ProviderError(ours, str(code), meaning, retryable=code in RETRYABLE_RESPONSE_CODES)
    shape = details.get("return_shape")
    if isinstance(shape, str) and shape in ENDINGS:
        ours, meaning = ENDINGS[shape]
        status = details.get("status")
        # The provider's error page failed to process the payment: another provider may not.
        retryable = ours is C.PROVIDER_ERROR
        return ProviderError(ours, f"{status}/{code}" if status else None, meaning, retryable=retryable)
    return None
