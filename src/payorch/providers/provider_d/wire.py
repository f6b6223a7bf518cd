"""Provider D's wire (Adyen Checkout API v71, Hosted Checkout sessions) as typed records, and its
error answers read for the framework's ``Refusals``. No meaning here: payment_results.py."""

from __future__ import annotations

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.refusals import ErrorBody, Refusals

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
RECEIVED = "received"  # every modification's answer: its outcome comes by notification


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Amount(_Wire):
    value: int
    currency: str


class SessionCreated(_Wire):
    id: str
    url: str | None = None
    expires_at: str | None = Field(default=None, alias="expiresAt")


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
    status: str | None = None


class ServiceError(_Wire):
    status: int | None = None
    error_code: str | None = Field(default=None, alias="errorCode")
    message: str | None = None
    error_type: str | None = Field(default=None, alias="errorType")


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
    live: str | None = None
    notification_items: list[NotificationWrapper] = Field(alias="notificationItems", min_length=1)


def _error_body(operation: str, response: httpx.Response) -> ErrorBody:
    try:
        error = ServiceError.model_validate_json(response.content)
    except ValidationError:
        error = ServiceError()
    return ErrorBody(error.message, error.error_code or str(response.status_code))


# 409 (704: this Idempotency-Key still in progress) and 429: try again, the outcome is unknown.
rejected = Refusals(PROVIDER_D, _error_body, unknown=frozenset({409, 429}))
