"""Provider D's wire (Adyen Checkout API v71) as typed records, its error answers and its standard
notifications (each item signed on its own: ``hmacSignature``). Meaning: payment_results.py."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from payorch.providers.base import InvalidNotification
from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.refusals import ErrorBody, Refusals, error_model
from payorch.providers.words import ProviderWord, said_at

SESSIONS = "/sessions"
PAYMENTS = "/payments"  # /payments/{pspReference}/captures | cancels | refunds | reversals
# The events a payorch connector subscribes to, in Adyen's names.
AUTHORISATION = "AUTHORISATION"
CAPTURE, CANCELLATION, EXPIRE = "CAPTURE", "CANCELLATION", "EXPIRE"
CANCEL_OR_REFUND, REFUND = "CANCEL_OR_REFUND", "REFUND"
HOLD_EVENTS = frozenset({CAPTURE, CANCELLATION, EXPIRE, CANCEL_OR_REFUND})
REFUND_EVENTS = frozenset({REFUND, CANCEL_OR_REFUND})
EVENTS = frozenset({AUTHORISATION}) | HOLD_EVENTS | REFUND_EVENTS
# SessionResultResponse.status (all six of the v71 enum).
ACTIVE, COMPLETED, PAYMENT_PENDING = "active", "completed", "paymentPending"
REFUSED, CANCELED, EXPIRED = "refused", "canceled", "expired"


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Amount(_Wire):
    value: int
    currency: str


class SessionCreated(_Wire):
    id: str
    url: str | None = None


class SessionPayment(_Wire):
    psp_reference: str | None = Field(default=None, alias="pspReference")
    result_code: str | None = Field(default=None, alias="resultCode")
    amount: Amount | None = None


class SessionResult(_Wire):
    id: str
    status: str | None = None
    reference: str | None = None
    payments: list[SessionPayment] = Field(default_factory=list)


class Modification(_Wire):  # a capture's, cancel's, refund's or reversal's: received
    psp_reference: str = Field(alias="pspReference")


class ServiceError(_Wire):
    error_code: str | None = Field(default=None, alias="errorCode")
    message: str | None = None


class NotificationItem(_Wire):  # every signed field kept as sent (strings)
    psp_reference: str = Field(alias="pspReference")
    original_reference: str | None = Field(default=None, alias="originalReference")
    merchant_account_code: str = Field(alias="merchantAccountCode")
    merchant_reference: str = Field(alias="merchantReference")
    amount: Amount
    event_code: str = Field(alias="eventCode")
    event_date: str | None = Field(default=None, alias="eventDate")
    success: str
    reason: str | None = None
    additional_data: dict[str, object] = Field(default_factory=dict, alias="additionalData")


class NotificationWrapper(_Wire):
    item: NotificationItem = Field(alias="NotificationRequestItem")


class NotificationRequest(_Wire):
    notification_items: list[NotificationWrapper] = Field(alias="notificationItems", min_length=1)


def _error_body(operation: str, response: httpx.Response) -> ErrorBody:
    error = error_model(ServiceError, response, ServiceError())
    return ErrorBody(error.message, error.error_code or str(response.status_code))


# 409 (704: this Idempotency-Key still in progress) and 429: try again, the outcome is unknown.
rejected = Refusals(PROVIDER_D, _error_body, unknown=frozenset({409, 429}))


def signature(item: NotificationItem, key_hex: str) -> str:
    original, amount = item.original_reference or "", item.amount
    values = [item.psp_reference, original, item.merchant_account_code, item.merchant_reference]
    values += [str(amount.value), amount.currency, item.event_code, item.success]
    try:
        key = binascii.a2b_hex(key_hex)
    except (binascii.Error, ValueError):
        raise InvalidNotification("the connector's hmac_key is not hex") from None
    return base64.b64encode(hmac.new(key, ":".join(values).encode(), hashlib.sha256).digest()).decode()


def verified(body: bytes, key_hex: str, merchant_account: str) -> list[NotificationItem]:
    """Every item of ``body`` (one that does not verify refuses the whole body: nothing is kept)."""
    try:
        items = [w.item for w in NotificationRequest.model_validate_json(body).notification_items]
    except ValidationError:
        raise InvalidNotification("not a notification of standard webhooks") from None
    for item in items:
        presented = item.additional_data.get("hmacSignature")
        if not isinstance(presented, str) or not hmac.compare_digest(presented, signature(item, key_hex)):
            raise InvalidNotification("an item's hmacSignature does not verify")
        if item.merchant_account_code != merchant_account:
            raise InvalidNotification("an item of another merchant account")
        if item.success not in ("true", "false"):
            raise InvalidNotification("an item whose success is not 'true' or 'false'")
    return items


def word_of(item: NotificationItem) -> ProviderWord:
    return ProviderWord(
        event=item.event_code,
        reference=item.psp_reference,
        success=item.success == "true",
        original_reference=item.original_reference or None,
        merchant_reference=item.merchant_reference,
        amount=item.amount.value,
        currency=item.amount.currency,
        reason=item.reason or None,
        event_at=said_at(item.event_date),
    )
