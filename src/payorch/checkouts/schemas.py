"""Request and response models of the checkout request."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payorch.checkouts.records import Checkout
from payorch.clock import isoformat
from payorch.intents.schemas import ProviderChoice
from payorch.intents.states import IntentStatus
from payorch.jsontypes import JsonObject
from payorch.providers import AUTO
from payorch.providers.registry import PROVIDER_IDS
from payorch.routing.record_schemas import RoutingRecordResponse


class CheckoutRequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: Annotated[
        ProviderChoice | None,
        Field(description="`auto` or a provider identifier; absent: the intent's requested provider."),
    ] = None

    @field_validator("provider")
    @classmethod
    def _provider(cls, value: str | None) -> str | None:
        if value is not None and value != AUTO and value not in PROVIDER_IDS:
            raise ValueError(f"must be auto or one of {', '.join(PROVIDER_IDS)}")
        return value


class CancelPaymentIntent(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reason: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=255,
            description="Written into the payment.cancelled event; absent: `merchant`.",
        ),
    ] = None


class CheckoutAction(BaseModel):
    type: Literal["REDIRECT"]
    url: str
    method: Literal["POST", "GET"]
    fields: dict[str, str] = Field(description="Hidden form fields for POST (`token_ws`); {} for GET.")


class CheckoutResponse(BaseModel):
    payment_intent_id: str
    status: IntentStatus
    provider: str
    checkout: CheckoutAction
    expires_at: str
    routing: RoutingRecordResponse = Field(description="Why this provider (docs/routing.md).")

    @classmethod
    def of(cls, checkout: Checkout, intent_status: str, routing: JsonObject) -> CheckoutResponse:
        return cls(
            payment_intent_id=checkout.payment_intent_id,
            status=IntentStatus(intent_status),
            provider=checkout.provider,
            checkout=CheckoutAction(
                type="REDIRECT", url=checkout.url, method=checkout.method, fields=dict(checkout.fields)
            ),
            expires_at=isoformat(checkout.expires_at),
            routing=RoutingRecordResponse.model_validate(routing),
        )
