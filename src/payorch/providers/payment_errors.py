"""Why a payment did not go through, in one shape for every provider (docs/api.md, "Why a
payment failed"): ``last_payment_error`` on the intent and in its events.

Each provider's package maps its own codes to the small stable set of ``PaymentErrorCode``
(``providers/<name>/decline_codes.py``) and declares that mapping in its registration, so the
checkout flow never tests a provider's name. A mapping reads only the provider's API answer (the
``PaymentResult`` an adapter built from it), never what the buyer's browser brought back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from payorch.clock import isoformat
from payorch.jsontypes import JsonObject
from payorch.providers.base import PaymentOutcome, PaymentResult


class PaymentErrorCode(StrEnum):
    DECLINED = "declined"  # the issuer or the provider declined, for no reason more precise
    INSUFFICIENT_FUNDS = "insufficient_funds"  # only where the provider says so
    INVALID_CARD_DETAILS = "invalid_card_details"  # number, expiry or security code wrong
    FRAUD_SUSPECTED = "fraud_suspected"  # the provider's or the issuer's risk checks refused it
    EXPIRED = "expired"  # the checkout's time ran out at the provider without a payment
    CANCELLED_BY_BUYER = "cancelled_by_buyer"  # the buyer left the provider's page
    PROVIDER_ERROR = "provider_error"  # the provider answered that it failed to process it


# payorch's own words for each code (the provider's are in provider_message).
MESSAGES: dict[PaymentErrorCode, str] = {
    PaymentErrorCode.DECLINED: "The payment was declined.",
    PaymentErrorCode.INSUFFICIENT_FUNDS: "The card has insufficient funds.",
    PaymentErrorCode.INVALID_CARD_DETAILS: "The card's details were not accepted.",
    PaymentErrorCode.FRAUD_SUSPECTED: "The payment was refused as possibly fraudulent.",
    PaymentErrorCode.EXPIRED: "The checkout expired before the buyer paid.",
    PaymentErrorCode.CANCELLED_BY_BUYER: "The buyer cancelled at the provider's page.",
    PaymentErrorCode.PROVIDER_ERROR: "The provider could not process the payment.",
}


@dataclass(frozen=True, slots=True)
class ProviderError:
    """What one provider's answer means: our code, and the provider's own code and words."""

    code: PaymentErrorCode
    provider_code: str | None = None
    provider_message: str | None = None
    # Worth another try at another provider (docs/routing.md, "A second chance after a
    # decline"): the issuer was unavailable, declined for no stated reason, or the provider
    # failed. Never for a reason the card carries everywhere (funds, fraud, expiry, details).
    retryable: bool = False


# A provider's mapping (declared in its registration): None when the answer ends nothing.
PaymentErrorMapping = Callable[[PaymentResult], ProviderError | None]

# The outcomes that end a payment unpaid.
ENDINGS = frozenset({PaymentOutcome.FAILED, PaymentOutcome.CANCELLED, PaymentOutcome.EXPIRED})
# What an outcome means when the provider's answer carries nothing more precise. An EXPIRED
# result without a provider's reason is payorch's own expiry (checkouts/expiry_job.py): the intent's
# status says it all, and nothing is recorded.
_BY_OUTCOME = {
    PaymentOutcome.FAILED: PaymentErrorCode.DECLINED,
    PaymentOutcome.CANCELLED: PaymentErrorCode.CANCELLED_BY_BUYER,
}


def by_outcome(result: PaymentResult) -> ProviderError | None:
    """The outcome's own code, with the adapter's reason as the provider's words."""
    code = _BY_OUTCOME.get(result.outcome)
    return ProviderError(code, None, result.reason) if code is not None else None


def payment_error(mapping: PaymentErrorMapping, result: PaymentResult) -> ProviderError | None:
    """What a result that ends its payment unpaid means (None for any other result)."""
    if result.outcome not in ENDINGS:
        return None
    return mapping(result) or by_outcome(result)


def last_payment_error(
    mapping: PaymentErrorMapping, result: PaymentResult, *, provider: str | None, at: datetime
) -> JsonObject | None:
    """The intent's ``last_payment_error`` for a result that ends its payment unpaid (None for
    any other result)."""
    found = payment_error(mapping, result)
    if found is None:
        return None
    return as_json(found, provider=provider, at=at)


def as_json(found: ProviderError, *, provider: str | None, at: datetime) -> JsonObject:
    return {
        "code": found.code.value,
        "message": MESSAGES[found.code],
        "provider": provider,
        "provider_code": found.provider_code,
        "provider_message": found.provider_message,
        "at": isoformat(at),
    }
