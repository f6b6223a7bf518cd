"""Request and response models of payments and refunds, and their bodies."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.config import JsonDict

from payorch import money
from payorch.clock import isoformat

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


class Payment(BaseModel):
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
    items: list[Payment]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last."
    )


class Refund(BaseModel):
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
    items: list[Refund]


def payment_body(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "payment_intent_id": row.payment_intent_id,
        "merchant_account_id": row.merchant_account_id,
        "external_reference": row.external_reference,
        "status": row.status,
        "amount": row.amount,
        "refunded_amount": row.refunded_amount,
        "currency": row.currency,
        "provider": row.provider,
        "authorization_code": row.authorization_code,
        "authorized_at": isoformat(row.authorized_at),
        "created_at": isoformat(row.created_at),
    }


def refund_body(row: Any) -> dict[str, Any]:
    return {
        "refund_id": row.id,
        "payment_id": row.payment_id,
        "payment_intent_id": row.payment_intent_id,
        "status": row.status,
        "amount": row.amount,
        "currency": row.currency,
        "reason": row.reason,
        "failure_reason": row.failure_reason,
        "created_at": isoformat(row.created_at),
    }
