"""Request and response models of payments and refunds, and their bodies."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from payorch import money
from payorch.clock import isoformat
from payorch.jsontypes import JsonObject
from payorch.payments.records import Payment, Refund

PAYMENT_STATUSES = ("AUTHORIZED", "PARTIALLY_REFUNDED", "REFUNDED")


def _never_null(schema: JsonDict) -> None:
    """Document an optional field that must not be null: its non-null branch, no null default."""
    branches = schema.pop("anyOf", [])
    schema.pop("default", None)
    for branch in branches if isinstance(branches, list) else []:
        if isinstance(branch, dict) and branch.get("type") != "null":
            schema.update(branch)


class CreateRefund(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Optional but never null: the validator refuses an explicit null and the document shows an
    # integer only, so only an absent field means "all that is left".
    amount: Annotated[
        int | None,
        Field(
            gt=0,
            le=money.MAX_AMOUNT,
            description="In the currency's minor unit; omit it to refund all that is left "
            "(null is refused).",
            json_schema_extra=_never_null,
        ),
    ] = None
    reason: Annotated[str | None, Field(max_length=255, examples=["customer request"])] = None

    @field_validator("amount", mode="before")
    @classmethod
    def _amount_not_null(cls, value: object) -> object:
        if value is None:  # only reached when sent: a default is not validated
            raise ValueError("must be an integer; omit the field to refund all that is left")
        return value


class PaymentResponse(BaseModel):
    id: str
    payment_intent_id: str
    merchant_account_id: str
    external_reference: str
    status: str = Field(description="AUTHORIZED, PARTIALLY_REFUNDED or REFUNDED.")
    amount: int
    refunded_amount: int
    currency: str
    provider: str
    authorization_code: str | None
    authorized_at: str
    created_at: str


class PaymentList(BaseModel):
    items: list[PaymentResponse]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last."
    )


class RefundResponse(BaseModel):
    refund_id: str
    payment_id: str
    payment_intent_id: str
    status: str = Field(description="PENDING, SUCCEEDED or FAILED.")
    amount: int
    currency: str
    reason: str | None
    failure_reason: str | None
    created_at: str


class RefundList(BaseModel):
    items: list[RefundResponse]


def payment_body(payment: Payment) -> JsonObject:
    return {
        "id": payment.id,
        "payment_intent_id": payment.payment_intent_id,
        "merchant_account_id": payment.merchant_account_id,
        "external_reference": payment.external_reference,
        "status": payment.status,
        "amount": payment.amount,
        "refunded_amount": payment.refunded_amount,
        "currency": payment.currency,
        "provider": payment.provider,
        "authorization_code": payment.authorization_code,
        "authorized_at": isoformat(payment.authorized_at),
        "created_at": isoformat(payment.created_at),
    }


def refund_body(refund: Refund) -> JsonObject:
    return {
        "refund_id": refund.id,
        "payment_id": refund.payment_id,
        "payment_intent_id": refund.payment_intent_id,
        "status": refund.status,
        "amount": refund.amount,
        "currency": refund.currency,
        "reason": refund.reason,
        "failure_reason": refund.failure_reason,
        "created_at": isoformat(refund.created_at),
    }
