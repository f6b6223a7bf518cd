"""Adyen's refusal reasons (docs.adyen.com, "Refusal reasons") in payorch's payment error codes:
one table for the adapter (a refused AUTHORISATION's ``reason``) and the simulator's page."""

from __future__ import annotations

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode, ProviderError

C = PaymentErrorCode
# refusalReasonCode refusalReason, by ours (codes 1, 13 and 30 are results, not refusals).
_TABLE = {
    C.PROVIDER_ERROR: """0 Unknown|4 Acquirer Error|9 Issuer Unavailable|21 Not Submitted
        39 RReq not received from DS""",
    C.INSUFFICIENT_FUNDS: "12 Not enough balance",
    C.CANCELLED_BY_BUYER: "16 Shopper Cancelled",
    C.FRAUD_SUSPECTED: "14 Acquirer Fraud|20 FRAUD|22 FRAUD-CANCELLED|31 Issuer Suspected Fraud",
    C.INVALID_CARD_DETAILS: """6 Expired Card|8 Invalid Card Number|17 Invalid Pin|18 Pin tries exceeded
        24 CVC Declined|32 AVS Declined""",
    C.DECLINED: """2 Refused|3 Referral|5 Blocked Card|7 Invalid Amount|10 Not supported
        11 3D Not Authenticated|15 Cancelled|19 Pin validation not possible|23 Transaction Not Permitted
        25 Restricted Card|26 Revocation Of Auth|27 Declined Non Generic|28 Withdrawal amount exceeded
        29 Withdrawal count exceeded|33 Card requires online pin|34 No checking account available on Card
        35 No savings account available on Card|36 Mobile PIN required|37 Contactless fallback
        38 Authentication required|40 Current AID is in Penalty Box.|41 CVM Required Restart Payment
        42 3DS Authentication Error|43 Online PIN required|44 Try another interface|45 Chip downgrade mode
        46 Transaction blocked by Adyen to prevent excessive retry fees""",
}
_ROWS = [
    (row.strip().split(" ", 1), ours)
    for ours, rows in _TABLE.items() for row in rows.replace("\n", "|").split("|")
]
# refusalReasonCode -> (refusalReason, ours), in code order.
REASONS: dict[str, tuple[str, PaymentErrorCode]] = {
    code: (words, ours) for (code, words), ours in sorted(_ROWS, key=lambda row: int(row[0][0]))
}
REFUSED = "2"  # what a refusal that names no reason says
_BY_WORDS = {words.casefold(): code for code, (words, _) in REASONS.items()}
# Worth another try elsewhere (docs/routing.md): no reason, or the issuer or acquirer did not answer.
RETRYABLE = frozenset({"0", "2", "3", "4", "9", "21", "27", "39"})


def code_of(reason: str | None) -> str | None:
    """The refusal reason's code (None: not a reason of the table)."""
    return _BY_WORDS.get((reason or "").strip().casefold())


def payment_error(result: PaymentResult) -> ProviderError | None:
    reason = result.details.get("refusal_reason")
    code = code_of(reason) if result.outcome is PaymentOutcome.FAILED and isinstance(reason, str) else None
    if code is None:
        return None  # by its outcome: declined, with the adapter's words
    return ProviderError(REASONS[code][1], code, REASONS[code][0], retryable=code in RETRYABLE)
