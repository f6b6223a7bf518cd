"""Request and response models of payment links."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payorch import money
from payorch.clock import isoformat
from payorch.http.listing import Instant, PageQuery, id_cursor
from payorch.http.schemas import HTTP_URL_PATTERN, WHOLE_NUMBER
from payorch.intents.schemas import (
    MAX_METADATA_KEY_LENGTH,
    MAX_URL_LENGTH,
    CurrencyCode,
    check_http_url,
    checked_currency,
    checked_metadata,
)
from payorch.jsontypes import JsonObject
from payorch.links.records import LinkDetail, LinkStatus

MAX_PAYMENTS = 10_000
MAX_BUYER_MESSAGE = 500


class CreatePaymentLink(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    merchant_account_id: Annotated[str, Field(min_length=1, max_length=40, examples=["mrc_..."])]
    amount: Annotated[
        int,
        Field(gt=0, le=money.MAX_AMOUNT, description="In the currency's minor unit (CLP 0, USD 2)."),
        WHOLE_NUMBER,
    ]
    currency: Annotated[CurrencyCode, Field(examples=["CLP"])]
    description: Annotated[
        str, Field(min_length=1, max_length=255, description="What the buyer pays for, shown on the page.")
    ]
    external_reference: Annotated[
        str | None,
        Field(min_length=1, max_length=64, description="The shop's own reference; each intent carries it."),
    ] = None
    expires_at: Annotated[
        Instant | None, Field(description="The page takes no payment from then on (EXPIRED).")
    ] = None
    max_payments: Annotated[
        int,
        Field(ge=1, le=MAX_PAYMENTS, description="Paid intents after which the link is COMPLETED."),
        WHOLE_NUMBER,
    ] = 1
    after_payment_url: Annotated[
        str | None,
        Field(
            max_length=MAX_URL_LENGTH,
            pattern=HTTP_URL_PATTERN,
            json_schema_extra={"format": "uri"},
            description="Where the buyer goes after paying; absent: payorch's page says paid or not.",
        ),
    ] = None
    metadata: Annotated[
        dict[str, Annotated[str, Field(max_length=500)]],
        Field(
            max_length=50,
            description="As an intent's metadata; each intent carries it.",
            json_schema_extra={"propertyNames": {"minLength": 1, "maxLength": MAX_METADATA_KEY_LENGTH}},
        ),
    ] = Field(default_factory=dict)

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        return checked_currency(value)

    @field_validator("after_payment_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else check_http_url(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str]) -> dict[str, str]:
        return checked_metadata(value)


class DeactivatePaymentLink(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    message: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=MAX_BUYER_MESSAGE,
            description="Shown to buyers who open the link from then on, beside payorch's own words.",
        ),
    ] = None


class PaymentLinkResponse(BaseModel):
    id: str
    url: str = Field(description="The buyer's page: send it to the buyer (no key needed there).")
    status: LinkStatus
    merchant_account_id: str
    amount: int
    currency: str
    description: str
    external_reference: str | None
    expires_at: str | None
    max_payments: int
    after_payment_url: str | None
    metadata: dict[str, str]
    buyer_message: str | None = Field(description="The message given when it was deactivated.")
    payments_count: int = Field(description="Its paid intents (authorized, refunded or not).")
    amount_collected: int = Field(description="Their amounts together, in the currency's minor unit.")
    created_at: str
    updated_at: str


class PaymentLinkList(BaseModel):
    items: list[PaymentLinkResponse]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class LinkListQuery(PageQuery):
    cursor: Annotated[str | None, id_cursor("plink")] = None
    status: Annotated[
        list[LinkStatus] | None, Field(description="Repeat the parameter for several statuses.")
    ] = None


def link_url(public_url: str, link_id: str) -> str:
    return f"{public_url.rstrip('/')}/pay/{link_id}"


def link_body(detail: LinkDetail, public_url: str) -> JsonObject:
    link, tally = detail.link, detail.tally
    return {
        "id": link.id,
        "url": link_url(public_url, link.id),
        "status": link.status,
        "merchant_account_id": link.merchant_account_id,
        "amount": link.amount,
        "currency": link.currency,
        "description": link.description,
        "external_reference": link.external_reference,
        "expires_at": isoformat(link.expires_at) if link.expires_at else None,
        "max_payments": link.max_payments,
        "after_payment_url": link.after_payment_url,
        "metadata": link.metadata,
        "buyer_message": link.buyer_message,
        "payments_count": tally.payments_count,
        "amount_collected": tally.amount_collected,
        "created_at": isoformat(link.created_at),
        "updated_at": isoformat(link.updated_at),
    }
