"""Request and response models of payment intents."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payorch import money
from payorch.clock import isoformat
from payorch.events.types import EventType
from payorch.http.listing import CreatedRangeQuery, id_cursor
from payorch.http.schemas import HTTP_URL_PATTERN, WHOLE_NUMBER
from payorch.intents.records import PaymentIntent, PaymentIntentDetail
from payorch.intents.states import IntentStatus
from payorch.jsontypes import JsonObject
from payorch.payments.schemas import PaymentStatus
from payorch.providers import AUTO
from payorch.providers.payment_errors import PaymentErrorCode
from payorch.providers.registry import PROVIDER_CHOICES, PROVIDER_IDS
from payorch.routing.record_schemas import RoutingRecordResponse

MAX_METADATA_KEYS = 50
MAX_METADATA_KEY_LENGTH = 40
MAX_METADATA_VALUE_LENGTH = 500
MAX_URL_LENGTH = 2048

# Documented as enums; the validators below check the same sets in words that say what to send.
CaptureMethod = Literal["automatic", "manual"]
ProviderChoice = Annotated[str, Field(json_schema_extra={"enum": list(PROVIDER_CHOICES)})]
CurrencyCode = Annotated[str, Field(json_schema_extra={"enum": money.currencies()})]


def check_http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an absolute http or https URL")
    if any(c.isspace() for c in value):
        raise ValueError("must not contain white space")
    return value


def checked_currency(value: str) -> str:
    problem = money.currency_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def checked_provider_choice(value: str) -> str:
    if value != AUTO and value not in PROVIDER_IDS:
        raise ValueError(f"must be auto or one of {', '.join(PROVIDER_IDS)}")
    return value


def checked_metadata(value: dict[str, str]) -> dict[str, str]:
    for key in value:
        if not 1 <= len(key) <= MAX_METADATA_KEY_LENGTH:
            raise ValueError(f"keys must be 1 to {MAX_METADATA_KEY_LENGTH} characters")
    return value


class CreatePaymentIntent(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    merchant_account_id: Annotated[str, Field(min_length=1, max_length=40, examples=["mrc_..."])]
    external_reference: Annotated[str, Field(min_length=1, max_length=64, examples=["order-1001"])]
    amount: Annotated[
        int,
        Field(
            gt=0, le=money.MAX_AMOUNT, description="In the currency's minor unit (CLP 0, USD 2)."
        ),
        WHOLE_NUMBER,
    ]
    currency: Annotated[CurrencyCode, Field(examples=["CLP"])]
    description: Annotated[str | None, Field(max_length=255)] = None
    provider: Annotated[
        ProviderChoice, Field(description="`auto` or a provider identifier.", examples=["auto"])
    ] = AUTO
    capture_method: Annotated[
        CaptureMethod,
        Field(
            description="`automatic`: the money is taken when the provider authorizes. `manual`: "
            "the provider holds it (REQUIRES_CAPTURE) until POST /v1/payments/{id}/capture or "
            "/void; only providers that can hold are chosen."
        ),
    ] = "automatic"
    return_url: Annotated[
        str,
        Field(
            max_length=MAX_URL_LENGTH,
            pattern=HTTP_URL_PATTERN,
            json_schema_extra={"format": "uri"},
            examples=["https://shop.example/return"],
        ),
    ]
    metadata: Annotated[
        dict[str, Annotated[str, Field(max_length=MAX_METADATA_VALUE_LENGTH)]],
        Field(
            max_length=MAX_METADATA_KEYS,
            # Key lengths stated for the document; _metadata checks them in its own words.
            json_schema_extra={
                "propertyNames": {"minLength": 1, "maxLength": MAX_METADATA_KEY_LENGTH}
            },
        ),
    ] = Field(default_factory=dict)

    @field_validator("currency")
    @classmethod
    def _currency(cls, value: str) -> str:
        return checked_currency(value)

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str) -> str:
        return checked_provider_choice(value)

    @field_validator("return_url")
    @classmethod
    def _return_url(cls, value: str) -> str:
        return check_http_url(value)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, str]) -> dict[str, str]:
        return checked_metadata(value)


class TimelineEntryResponse(BaseModel):
    type: EventType
    at: str


class IntentPaymentResponse(BaseModel):
    id: str
    status: PaymentStatus
    authorization_code: str | None = None
    authorized_at: str | None = None
    amount_captured: int = Field(0, description="What was captured: all of it for `automatic`.")
    capture_before: str | None = Field(None, description="While held: the hold lapses then unless captured.")


class PaymentErrorResponse(BaseModel):
    """Why the payment did not go through (docs/api.md, "Why a payment failed")."""

    code: PaymentErrorCode = Field(description="payorch's code: the same for every provider.")
    message: str = Field(description="payorch's words for the code.")
    provider: str | None = Field(description="The provider that answered.")
    provider_code: str | None = Field(description="The provider's own code, as it sent it.")
    provider_message: str | None = Field(
        description="The provider's words, or its documented meaning of the code."
    )
    at: str


class WaitingResponse(BaseModel):
    """What a PROCESSING intent waits for (docs/api.md, "Why a payment failed")."""

    waiting_for: Literal["provider_confirmation"] = Field(description="The provider's answer on the payment.")
    provider: str
    next_check_at: str | None = Field(description="When payorch asks the provider again.")
    last_check_at: str | None = Field(
        description="payorch asks until then: the provider answers about it no longer; null: no limit."
    )


class PaymentIntentSummary(BaseModel):
    """An intent as a list shows it: without its timeline and payment (read the intent)."""

    id: str
    status: IntentStatus
    merchant_account_id: str
    external_reference: str
    amount: int
    currency: str
    description: str | None
    provider: str = Field(
        description="The chosen provider; before a checkout, the requested value."
    )
    return_url: str
    metadata: dict[str, str]
    capture_method: CaptureMethod
    created_at: str
    payment_link_id: str | None = Field(
        None, description="The payment link whose buyer page made it; absent for the API's intents."
    )


class PaymentIntentResponse(PaymentIntentSummary):
    payment: IntentPaymentResponse | None = Field(
        None, description="Present once the provider authorized."
    )
    routing: RoutingRecordResponse | None = Field(
        None, description="Why its latest checkout went where it went; present once a checkout was made."
    )
    last_payment_error: PaymentErrorResponse | None = Field(
        None, description="Why the payment did not go through; present once a provider ended it unpaid."
    )
    processing: WaitingResponse | None = Field(
        None, description="Present while PROCESSING: what it waits for, and until when."
    )
    timeline: list[TimelineEntryResponse]


class IntentListQuery(CreatedRangeQuery):
    cursor: Annotated[str | None, id_cursor("payi")] = None
    status: Annotated[
        list[IntentStatus] | None, Field(description="Repeat the parameter for several statuses.")
    ] = None
    provider: Annotated[
        str | None,
        Field(
            max_length=64,
            description="The intent's `provider` as shown: the chosen one, or before a checkout "
            "the requested one.",
        ),
    ] = None
    merchant_account_id: Annotated[str | None, Field(max_length=40)] = None
    external_reference: Annotated[str | None, Field(max_length=64, description="Exact match.")] = (
        None
    )


class PaymentIntentList(BaseModel):
    items: list[PaymentIntentSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last."
    )


def intent_summary_body(intent: PaymentIntent) -> JsonObject:
    return {
        "id": intent.id,
        "status": intent.status,
        "merchant_account_id": intent.merchant_account_id,
        "external_reference": intent.external_reference,
        "amount": intent.amount,
        "currency": intent.currency,
        "description": intent.description,
        "provider": intent.provider or intent.requested_provider,
        "return_url": intent.return_url,
        "metadata": intent.metadata,
        "capture_method": intent.capture_method,
        "created_at": isoformat(intent.created_at),
    } | ({"payment_link_id": intent.payment_link_id} if intent.payment_link_id else {})


def intent_body(detail: PaymentIntentDetail) -> JsonObject:
    """The response body (built by hand: ``payment`` is left out, not null, until authorized)."""
    body = intent_summary_body(detail.intent)
    body["timeline"] = [{"type": t.type, "at": isoformat(t.at)} for t in detail.timeline]
    payment = detail.payment
    if payment is not None:
        body["payment"] = {
            "id": payment.id,
            "status": payment.status,
            "authorization_code": payment.authorization_code,
            "authorized_at": isoformat(payment.authorized_at),
            "amount_captured": payment.amount_captured,
            "capture_before": isoformat(payment.capture_before) if payment.capture_before else None,
        }
    if detail.intent.routing is not None:
        body["routing"] = detail.intent.routing
    if detail.intent.last_payment_error is not None:
        body["last_payment_error"] = detail.intent.last_payment_error
    waiting = detail.waiting
    if waiting is not None:
        body["processing"] = {
            "waiting_for": "provider_confirmation",
            "provider": waiting.provider,
            "next_check_at": isoformat(waiting.next_check_at) if waiting.next_check_at else None,
            "last_check_at": isoformat(waiting.last_check_at) if waiting.last_check_at else None,
        }
    return body
