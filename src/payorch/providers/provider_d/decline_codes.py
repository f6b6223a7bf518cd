"""Provider D's refusals in payorch's payment error codes (providers/payment_errors.py): Adyen's
refusal reasons (docs.adyen.com, "Refusal reasons"), said in a refused AUTHORISATION's ``reason``
(the payment result's ``details["refusal_reason"]``). Its code is recorded as the provider's."""

from __future__ import annotations

from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import PaymentErrorCode, ProviderError

C = PaymentErrorCode
# refusalReasonCode -> (refusalReason, ours). Codes 1, 13 and 30 are not refusals.
REASONS: dict[str, tuple[str, PaymentErrorCode]] = {
    "0": ("Unknown", C.PROVIDER_ERROR),
    "2": ("Refused", C.DECLINED),
    "3": ("Referral", C.DECLINED),
    "4": ("Acquirer Error", C.PROVIDER_ERROR),
    "5": ("Blocked Card", C.DECLINED),
    "6": ("Expired Card", C.INVALID_CARD_DETAILS),
    "7": ("Invalid Amount", C.DECLINED),
    "8": ("Invalid Card Number", C.INVALID_CARD_DETAILS),
    "9": ("Issuer Unavailable", C.PROVIDER_ERROR),
    "10": ("Not supported", C.DECLINED),
    "11": ("3D Not Authenticated", C.DECLINED),
    "12": ("Not enough balance", C.INSUFFICIENT_FUNDS),
    "14": ("Acquirer Fraud", C.FRAUD_SUSPECTED),
    "15": ("Cancelled", C.DECLINED),
    "16": ("Shopper Cancelled", C.CANCELLED_BY_BUYER),
    "17": ("Invalid Pin", C.INVALID_CARD_DETAILS),
    "18": ("Pin tries exceeded", C.INVALID_CARD_DETAILS),
    "19": ("Pin validation not possible", C.DECLINED),
    "20": ("FRAUD", C.FRAUD_SUSPECTED),
    "21": ("Not Submitted", C.PROVIDER_ERROR),
    "22": ("FRAUD-CANCELLED", C.FRAUD_SUSPECTED),
    "23": ("Transaction Not Permitted", C.DECLINED),
    "24": ("CVC Declined", C.INVALID_CARD_DETAILS),
    "25": ("Restricted Card", C.DECLINED),
    "26": ("Revocation Of Auth", C.DECLINED),
    "27": ("Declined Non Generic", C.DECLINED),
    "28": ("Withdrawal amount exceeded", C.DECLINED),
    "29": ("Withdrawal count exceeded", C.DECLINED),
    "31": ("Issuer Suspected Fraud", C.FRAUD_SUSPECTED),
    "32": ("AVS Declined", C.INVALID_CARD_DETAILS),
    "33": ("Card requires online pin", C.DECLINED),
    "34": ("No checking account available on Card", C.DECLINED),
    "35": ("No savings account available on Card", C.DECLINED),
    "36": ("Mobile PIN required", C.DECLINED),
    "37": ("Contactless fallback", C.DECLINED),
    "38": ("Authentication required", C.DECLINED),
    "39": ("RReq not received from DS", C.PROVIDER_ERROR),
    "40": ("Current AID is in Penalty Box.", C.DECLINED),
    "41": ("CVM Required Restart Payment", C.DECLINED),
    "42": ("3DS Authentication Error", C.DECLINED),
    "43": ("Online PIN required", C.DECLINED),
    "44": ("Try another interface", C.DECLINED),
    "45": ("Chip downgrade mode", C.DECLINED),
    "46": ("Transaction blocked by Adyen to prevent excessive retry fees", C.DECLINED),
}
_BY_WORDS = {words.casefold(): code for code, (words, _) in REASONS.items()}
# Worth another try at another provider (docs/routing.md, "Which declines are retried"): no
# stated reason, or the issuer or acquirer could not answer.
RETRYABLE = frozenset({"0", "2", "3", "4", "9", "21", "27", "39"})


def code_of(reason: str | None) -> str | None:
    """The refusal reason's code (None: not a reason of the table)."""
    return _BY_WORDS.get((reason or "").strip().casefold())


def payment_error(result: PaymentResult) -> ProviderError | None:
    if result.outcome is not PaymentOutcome.FAILED:
        return None
    reason = result.details.get("refusal_reason")
    code = code_of(reason if isinstance(reason, str) else None)
    if code is None:
        return None  # by its outcome: declined, with the adapter's words
    return ProviderError(REASONS[code][1], code, REASONS[code][0], retryable=code in RETRYABLE)
