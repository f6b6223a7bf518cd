"""Provider C's own shapes: Stripe's Checkout Sessions, PaymentIntents, Refunds and Events.

Requests are form-encoded with bracketed nesting (``form_of``); answers are JSON, read
leniently (extra fields ignored). Amounts are integers in the currency's smallest unit as the
provider counts it: zero-decimal currencies (CLP, JPY, KRW...) count whole units, which is
also their ISO 4217 minor unit, so a payorch amount crosses unchanged (``wire_amount`` refuses
a currency where the two would differ). Currency codes are lower case on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from payorch.money import exponent

SESSIONS = "/v1/checkout/sessions"
PAYMENT_INTENTS = "/v1/payment_intents"
REFUNDS = "/v1/refunds"
MANUAL = "manual"  # payment_intent_data[capture_method]
LAPSED_REASON = "automatic"  # cancellation_reason of an authorization that expired uncaptured
DISPUTES = "/v1/disputes"
# The version whose shapes we read (the one the official SDK pins as we write this).
API_VERSION = "2026-10-28.endive"

# Session status and payment_status.
OPEN = "open"
COMPLETE = "complete"
EXPIRED = "expired"
PAID = "paid"
UNPAID = "unpaid"
NO_PAYMENT_REQUIRED = "no_payment_required"

# PaymentIntent status.
REQUIRES_PAYMENT_METHOD = "requires_payment_method"
REQUIRES_CONFIRMATION = "requires_confirmation"
REQUIRES_ACTION = "requires_action"
PROCESSING = "processing"
REQUIRES_CAPTURE = "requires_capture"
SUCCEEDED = "succeeded"
CANCELED = "canceled"

# Refund status.
REFUND_PENDING = "pending"
REFUND_SUCCEEDED = "succeeded"
REFUND_FAILED = "failed"
REFUND_CANCELED = "canceled"
REFUND_REQUIRES_ACTION = "requires_action"

# Event types we act on: each names a checkout session to read.
SESSION_EVENTS = frozenset(
    {
        "checkout.session.completed",
        "checkout.session.async_payment_succeeded",
        "checkout.session.async_payment_failed",
        "checkout.session.expired",
    }
)

# Event types about a hold (manual capture): each names a PaymentIntent (payment_intent.*) or a
# charge of one (charge.*). A hint only: the PaymentIntent is read before anything moves.
HOLD_EVENTS = frozenset(
    {
        "payment_intent.amount_capturable_updated",  # held: capturable now
        "charge.captured",
        "payment_intent.canceled",  # voided, or lapsed (cancellation_reason automatic)
        "charge.expired",  # lapsed
    }
)

# Event types about a dispute (chargeback): each names a dispute to read.
DISPUTE_EVENTS = frozenset({"charge.dispute.created", "charge.dispute.updated", "charge.dispute.closed"})
# Dispute status: an inquiry (warning_*) or a chargeback, open until won or lost.
DISPUTE_WON = "won"
DISPUTE_LOST = "lost"
DISPUTE_WARNING_CLOSED = "warning_closed"  # an inquiry that ended without a chargeback
DISPUTE_OPEN = frozenset({"warning_needs_response", "warning_under_review", "needs_response", "under_review"})

# The provider's zero-decimal currencies (its docs, "Zero-decimal currencies").
ZERO_DECIMAL = frozenset(
    {
        "BIF",
        "CLP",
        "DJF",
        "GNF",
        "JPY",
        "KMF",
        "KRW",
        "MGA",
        "PYG",
        "RWF",
        "UGX",
        "VND",
        "VUV",
        "XAF",
        "XOF",
        "XPF",
    }
)


def wire_amount(amount: int, currency: str) -> int:
    """A payorch amount (ISO minor units) in the provider's unit; ValueError where they differ."""
    decimals = 0 if currency.upper() in ZERO_DECIMAL else 2
    if exponent(currency.upper()) != decimals:
        raise ValueError(f"{currency} counts differently at the provider")
    return amount


FormValue = str | int | bool | None | Mapping[str, "FormValue"] | Sequence["FormValue"]


def _pairs(prefix: str, value: FormValue) -> list[tuple[str, str]]:
    if value is None:
        return []
    if isinstance(value, bool):
        return [(prefix, "true" if value else "false")]
    if isinstance(value, int | str):
        return [(prefix, str(value))]
    if isinstance(value, Mapping):
        return [pair for key, inner in value.items() for pair in _pairs(f"{prefix}[{key}]", inner)]
    return [pair for index, inner in enumerate(value) for pair in _pairs(f"{prefix}[{index}]", inner)]


def form_of(fields: Mapping[str, FormValue]) -> bytes:
    """``{"line_items": [{"quantity": 1}]}`` -> ``line_items[0][quantity]=1`` (None left out)."""
    pairs = [pair for key, value in fields.items() for pair in _pairs(key, value)]
    return urlencode(pairs).encode()


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PaymentIntent(_Answer):
    id: str = Field(min_length=1)
    status: str
    amount: int
    amount_received: int = 0
    currency: str
    latest_charge: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    created: int | None = None
    canceled_at: int | None = None
    # Why its last attempt failed (Stripe's error object), when one did.
    last_payment_error: ErrorDetail | None = None
    # Manual capture: what may still be captured, and why it was canceled (automatic: lapsed).
    amount_capturable: int = 0
    capture_method: str | None = None
    cancellation_reason: str | None = None


class CardDetails(_Answer):
    capture_before: int | None = None  # unix seconds: an uncaptured authorization lapses then


class PaymentMethodDetails(_Answer):
    card: CardDetails | None = None


class Charge(_Answer):
    id: str = Field(min_length=1)
    payment_method_details: PaymentMethodDetails | None = None


class HeldPaymentIntent(_Answer):
    """A PaymentIntent read with ``expand[]=latest_charge`` (its hold's deadline)."""

    id: str = Field(min_length=1)
    status: str
    amount: int
    amount_received: int = 0
    amount_capturable: int = 0
    cancellation_reason: str | None = None
    latest_charge: Charge | str | None = None

    @property
    def capture_before(self) -> int | None:
        charge = self.latest_charge
        if (
            isinstance(charge, Charge)
            and charge.payment_method_details
            and charge.payment_method_details.card
        ):
            return charge.payment_method_details.card.capture_before
        return None


class CheckoutSession(_Answer):
    id: str = Field(min_length=1)
    url: str | None = None
    status: str | None = None  # null only for sessions of old API versions
    payment_status: str
    # An id, or the object when expanded (expand[]=payment_intent).
    payment_intent: PaymentIntent | str | None = None
    amount_total: int | None = None
    currency: str | None = None
    client_reference_id: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    expires_at: int | None = None
    created: int | None = None


class SessionList(_Answer):
    data: list[CheckoutSession]
    has_more: bool = False


class Refund(_Answer):
    id: str = Field(min_length=1)
    status: str | None = None
    amount: int
    currency: str | None = None
    payment_intent: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    failure_reason: str | None = None


class RefundList(_Answer):
    data: list[Refund]
    has_more: bool = False


class Dispute(_Answer):
    id: str = Field(min_length=1)
    status: str
    amount: int
    currency: str | None = None
    payment_intent: str | None = None
    charge: str | None = None
    reason: str | None = None
    created: int | None = None  # unix seconds: when the dispute opened


class DisputeList(_Answer):
    data: list[Dispute]
    has_more: bool = False


class ErrorDetail(_Answer):
    type: str | None = None
    code: str | None = None
    message: str | None = None
    decline_code: str | None = None


class ErrorBody(_Answer):
    error: ErrorDetail


class EventData(_Answer):
    object: dict[str, Any]


class Event(_Answer):
    id: str
    type: str
    data: EventData


def event_of(raw: bytes) -> Event | None:
    try:
        return Event.model_validate_json(raw)
    except ValidationError:
        return None
