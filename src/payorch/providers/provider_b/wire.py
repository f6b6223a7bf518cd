"""Provider B's own shapes: the Checkout Pro API (the simulator serves them: docs/simulator.md).

Requests are strict (we write them); responses are lenient (extra fields ignored). Amounts on
this wire are decimal numbers in the currency's major unit; ``to_major``/``to_minor`` convert
with the ISO 4217 exponent, exactly (Decimal), at the edge.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from payorch.money import exponent
from payorch.providers.base import CheckoutRequest

PREFERENCES = "/checkout/preferences"
PAYMENTS = "/v1/payments"
PAYMENTS_SEARCH = "/v1/payments/search"
MERCHANT_ORDERS = "/merchant_orders"
# Notification topics: the webhook's ``type`` and the older IPN's ``topic``.
TOPIC_PAYMENT = "payment"
TOPIC_MERCHANT_ORDER = "merchant_order"
WEBHOOK_MERCHANT_ORDER = "topic_merchant_order_wh"

# Payment statuses.
APPROVED = "approved"
PENDING = "pending"
IN_PROCESS = "in_process"
AUTHORIZED = "authorized"
IN_MEDIATION = "in_mediation"
REJECTED = "rejected"
CANCELLED = "cancelled"
REFUNDED = "refunded"
CHARGED_BACK = "charged_back"

# status_detail of a payment refunded by the buyer protection program: a mediation lost.
BUYER_PROTECTION_REFUNDED = "bpp_refunded"

NULL = "null"  # what the return carries for payment_id/status when the buyer did not pay


def to_major(amount: int, currency: str) -> int | float:
    """Minor units -> the wire's number (an int when the currency has no minor unit)."""
    exp = exponent(currency)
    if exp is None:
        raise ValueError(f"unknown currency {currency!r}")
    if exp == 0:
        return amount
    return float(Decimal(amount).scaleb(-exp))


def to_minor(value: Decimal | float | int, currency: str) -> int | None:
    """The wire's number -> minor units; None when it is not a whole number of minor units."""
    exp = exponent(currency)
    if exp is None:
        return None
    scaled = Decimal(str(value)).scaleb(exp)
    if scaled != scaled.to_integral_value():
        return None
    return int(scaled)


def _id_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) else value  # ids are numbers on the wire


WireId = Annotated[str, BeforeValidator(_id_text)]


class _ProviderBRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _ProviderBResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Item(_ProviderBRequest):
    id: str
    title: str
    description: str | None = None
    quantity: int
    currency_id: str
    unit_price: int | float


def item_of(request: CheckoutRequest) -> Item:
    """The preference's one item. Checkout Pro shows its title, and its description under it:
    the shop's description and order reference (the preference's own external_reference is the
    intent id, which matches payments back)."""
    order = f"Order {request.external_reference}" if request.external_reference else None
    return Item(
        id=request.payment_intent_id,
        title=request.description or order or f"Payment {request.payment_intent_id}",
        description=order if request.description else None,
        quantity=1,
        currency_id=request.currency,
        unit_price=to_major(request.amount, request.currency),
    )


class BackUrls(_ProviderBRequest):
    success: str
    failure: str
    pending: str


class CreatePreference(_ProviderBRequest):
    items: list[Item]
    back_urls: BackUrls
    auto_return: str  # "approved" or "all"
    external_reference: str
    notification_url: str | None = None
    expires: bool
    expiration_date_from: str | None = None
    expiration_date_to: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


class Preference(_ProviderBResponse):
    id: str = Field(min_length=1)
    init_point: str = Field(min_length=1)
    sandbox_init_point: str | None = None
    date_created: str | None = None


class ExpirePreference(_ProviderBRequest):
    expires: bool
    expiration_date_from: str
    expiration_date_to: str


class ProviderBPayment(_ProviderBResponse):
    id: WireId
    status: str
    status_detail: str | None = None
    external_reference: str | None = None
    transaction_amount: Decimal | None = None
    transaction_amount_refunded: Decimal | None = None
    currency_id: str | None = None
    date_approved: datetime | None = None
    date_created: datetime | None = None
    date_last_updated: datetime | None = None  # orders its states (payments/disputes.py)
    authorization_code: str | None = None
    metadata: dict[str, Any] | None = None


class Paging(_ProviderBResponse):
    total: int | None = None
    limit: int | None = None
    offset: int | None = None


class PaymentSearch(_ProviderBResponse):
    paging: Paging | None = None
    results: list[ProviderBPayment]


class CreateProviderBRefund(_ProviderBRequest):
    amount: int | float


class ProviderBRefund(_ProviderBResponse):
    id: WireId
    payment_id: WireId | None = None
    amount: Decimal | None = None
    status: str | None = None
    date_created: str | None = None
    reason: str | None = None


class MerchantOrderPayment(_ProviderBResponse):
    id: WireId
    status: str | None = None


class MerchantOrder(_ProviderBResponse):
    """A merchant order collects a preference's payment attempts."""

    id: WireId
    external_reference: str | None = None
    payments: list[MerchantOrderPayment] = Field(default_factory=list)


class Notification(_ProviderBResponse):
    """The body of a notification: proves nothing, only says which payment to read."""

    type: str | None = None
    action: str | None = None
    data: dict[str, Any] | None = None


def notification_of(raw: bytes) -> Notification:
    try:
        return Notification.model_validate_json(raw or b"{}")
    except ValidationError:
        return Notification()  # the body proves nothing; the query and signature decide
