"""Provider A's own shapes: the Webpay Plus REST API 1.2 (the simulator serves them: docs/simulator.md).

Requests are strict (we write them); responses are lenient (extra fields ignored, numbers as
the provider sends them), and converted to our vocabulary in adapter.py only.
"""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

API_PREFIX = "/rswebpaytransaction/api/webpay/v1.2"
TRANSACTIONS = API_PREFIX + "/transactions"

BUY_ORDER_MAX = 26
SESSION_ID_MAX = 61
RETURN_URL_MAX = 255
AMOUNT_MAX = 10**17 - 1  # at most 17 digits
BUY_ORDER_CHARSET = re.compile(r"^[A-Za-z0-9|_=&%.,~:/?\[+!@()>\-]+$")
TOKEN_LIFETIME_SECONDS = 300  # a token lives 5 minutes after create
STATUS_DAYS = 7  # status answers for 7 days after create, then 422
STATUS_WINDOW_CLOSED = "passed max time"  # in that 422's error_message (the provider's wording)
HOLD_DAYS = 7  # a deferred-capture authorization is held this long, then released
CAPTURE_PATH = "/capture"  # PUT {TRANSACTIONS}/{token}/capture

# Transaction statuses.
INITIALIZED = "INITIALIZED"
AUTHORIZED = "AUTHORIZED"
REVERSED = "REVERSED"
FAILED = "FAILED"
NULLIFIED = "NULLIFIED"
PARTIALLY_NULLIFIED = "PARTIALLY_NULLIFIED"
CAPTURED = "CAPTURED"

# Refund error response codes and what they mean.
REFUND_ERRORS = {
    16: "the provider does not allow a refund of this transaction",
    53: "a partial refund is not allowed for a payment in installments",
    284: "the refund period has passed",
    310: "the transaction was already nullified",
    311: "the amount exceeds what is left to refund",
}

# Return shapes (the buyer's browser brings these back to return_url).
TOKEN_WS = "token_ws"  # noqa: S105 - a field name
TBK_TOKEN = "TBK_TOKEN"  # noqa: S105 - a field name
TBK_ORDEN_COMPRA = "TBK_ORDEN_COMPRA"
TBK_ID_SESION = "TBK_ID_SESION"


class _ProviderARequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _ProviderAResponse(BaseModel):
    model_config = ConfigDict(extra="ignore")


class CreateTransaction(_ProviderARequest):
    buy_order: str = Field(max_length=BUY_ORDER_MAX, pattern=BUY_ORDER_CHARSET.pattern)
    session_id: str = Field(max_length=SESSION_ID_MAX)
    amount: int = Field(gt=0, le=AMOUNT_MAX)
    return_url: str = Field(max_length=RETURN_URL_MAX)


class CreatedTransaction(_ProviderAResponse):
    token: str = Field(min_length=1)
    url: str = Field(min_length=1)


class CardDetail(_ProviderAResponse):
    card_number: str | None = None


class TransactionStatus(_ProviderAResponse):
    """The answer of commit and of status (same fields)."""

    status: str
    vci: str | None = None  # never validated (new values keep appearing)
    amount: int | None = None
    buy_order: str | None = None
    session_id: str | None = None
    card_detail: CardDetail | None = None
    accounting_date: str | None = None
    transaction_date: datetime | None = None
    authorization_code: str | None = None
    payment_type_code: str | None = None
    response_code: int | None = None
    installments_amount: int | None = None
    installments_number: int | None = None
    balance: int | None = None


class RefundTransaction(_ProviderARequest):
    amount: int = Field(gt=0, le=AMOUNT_MAX)


class ProviderARefundAnswer(_ProviderAResponse):
    type: str
    authorization_code: str | None = None
    authorization_date: datetime | None = None
    nullified_amount: int | None = None
    balance: int | None = None
    response_code: int | None = None


class ProviderAErrorBody(_ProviderAResponse):
    error_message: str | None = None
    response_code: int | None = None  # some refund refusals carry it


class CaptureTransaction(_ProviderARequest):
    """Deferred capture (transbank-sdk: ``Transaction.capture``)."""

    buy_order: str = Field(max_length=BUY_ORDER_MAX)
    authorization_code: str = Field(min_length=1)
    capture_amount: int = Field(gt=0, le=AMOUNT_MAX)


class CapturedTransaction(_ProviderAResponse):
    authorization_code: str | None = None
    authorization_date: datetime | None = None
    captured_amount: int
    response_code: int | None = None
