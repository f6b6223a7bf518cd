"""Request and response models of payments and refunds, and their bodies."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from payorch import money
from payorch.http.listing import CreatedRangeQuery, id_cursor
from payorch.http.schemas import WHOLE_NUMBER
from payorch.jsontypes import JsonObject, json_fields
from payorch.payments.records import Payment, Refund

PaymentStatus = Literal[
    "REQUIRES_CAPTURE", "AUTHORIZED", "PARTIALLY_REFUNDED", "REFUNDED", "VOIDED", "EXPIRED"
]


class PaymentListQuery(CreatedRangeQuery):
    cursor: Annotated[str | None, id_cursor("pay")] = None
    status: PaymentStatus | None = None


def _never_null(schema: JsonDict) -> None:
    """Document an optional field that must not be null: its non-null branch, no null default."""
    branches = schema.pop("anyOf", [])
    schema.pop("default", None)
    for branch in branches if isinstance(branches, list) else []:
        if isinstance(branch, dict) and branch.get("type") != "null":
            schema.update(branch)


def _not_null(value: object, omitted: str) -> object:
    """An optional amount sent as null (only reached when sent: a default is not validated)."""
    if value is None:
        raise ValueError(f"must be an integer; omit the field to {omitted}")
    return value


class CreateRefund(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Optional but never null: the validator refuses an explicit null and the document shows an
    # integer only, so only an absent field means "all that is left".
    amount: Annotated[
        int | None,
        Field(
            gt=0,
            le=money.MAX_AMOUNT,
            description="In the currency's minor unit; omit it to refund all that is left (null is refused).",
            json_schema_extra=_never_null,
        ),
        WHOLE_NUMBER,
    ] = None
    reason: Annotated[str | None, Field(max_length=255, examples=["customer request"])] = None

    @field_validator("amount", mode="before")
    @classmethod
    def _amount_not_null(cls, value: object) -> object:
        return _not_null(value, "refund all that is left")


class CapturePayment(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    amount: Annotated[
        int | None,
        Field(
            gt=0,
            le=money.MAX_AMOUNT,
            description="In the currency's minor unit; omit it to capture all that is capturable "
            "(null is refused). Less releases the rest where the provider does.",
            json_schema_extra=_never_null,
        ),
        WHOLE_NUMBER,
    ] = None

    @field_validator("amount", mode="before")
    @classmethod
    def _amount_not_null(cls, value: object) -> object:
        return _not_null(value, "capture all that is capturable")


class VoidPayment(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PaymentDispute(BaseModel):
    status: Literal["OPEN", "WON", "LOST"]
    kind: str | None = Field(description="chargeback (the card issuer) or mediation (the buyer).")
    disputed_at: str
    closed_at: str | None


class PaymentResponse(BaseModel):
    id: str
    payment_intent_id: str
    merchant_account_id: str
    external_reference: str
    status: PaymentStatus
    amount: int
    refunded_amount: int
    currency: str
    provider: str
    authorization_code: str | None
    authorized_at: str
    created_at: str
    capture_method: Literal["automatic", "manual"]
    amount_capturable: int = Field(description="What a capture may still take (REQUIRES_CAPTURE only).")
    amount_captured: int = Field(description="What was captured: refunds count from it.")
    amount_released: int = Field(
        description="What the provider released of the hold: the rest of a partial capture, or all "
        "of a voided or lapsed hold."
    )
    capture_before: str | None = Field(description="While held: the hold lapses then unless captured.")
    captured_at: str | None
    dispute: PaymentDispute | None = Field(
        description="A chargeback or mediation after the payment (null: none); it does not "
        "change refunded_amount or what can be refunded."
    )


class PaymentList(BaseModel):
    items: list[PaymentResponse]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class RefundResponse(BaseModel):
    refund_id: str
    payment_id: str
    payment_intent_id: str
    status: Literal["PENDING", "SUCCEEDED", "FAILED"]
    amount: int
    currency: str
    reason: str | None
    failure_reason: str | None
    created_at: str


class RefundList(BaseModel):
    items: list[RefundResponse]


_PAYMENT_FIELDS = (
    "id",
    "payment_intent_id",
    "merchant_account_id",
    "external_reference",
    "status",
    "amount",
    "refunded_amount",
    "currency",
    "provider",
    "authorization_code",
    "authorized_at",
    "created_at",
    "capture_method",
    "amount_captured",
    "amount_released",
    "capture_before",
    "captured_at",
)
_REFUND_FIELDS = (
    "payment_id",
    "payment_intent_id",
    "status",
    "amount",
    "currency",
    "reason",
    "failure_reason",
    "created_at",
)


def payment_body(payment: Payment) -> JsonObject:
    dispute: JsonObject | None = None
    if payment.dispute_status is not None:
        dispute = {
            "status": payment.dispute_status,
            "kind": payment.dispute_kind,
            **json_fields(payment, ("disputed_at",)),
            "closed_at": json_fields(payment, ("dispute_closed_at",))["dispute_closed_at"],
        }
    body = json_fields(payment, _PAYMENT_FIELDS)
    return {**body, "amount_capturable": payment.amount_capturable, "dispute": dispute}


def refund_body(refund: Refund) -> JsonObject:
    return {"refund_id": refund.id, **json_fields(refund, _REFUND_FIELDS)}
