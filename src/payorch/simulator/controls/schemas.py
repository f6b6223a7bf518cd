"""Request and response models of the simulator controls."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from payorch.http.schemas import WHOLE_NUMBER

# Provider identifiers of the API, and the simulator's short names (both accepted).
PROVIDERS = {
    "provider_a_redirect_post": "provider_a",
    "provider_b_redirect_get": "provider_b",
    "provider_a": "provider_a",
    "provider_b": "provider_b",
}
ProviderId = Literal[
    "provider_a_redirect_post", "provider_b_redirect_get", "provider_a", "provider_b"
]
LONG_NAMES = {"provider_a": "provider_a_redirect_post", "provider_b": "provider_b_redirect_get"}


class FaultRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    provider: ProviderId
    mode: Literal["ok", "error", "timeout"]


class Fault(BaseModel):
    provider: str
    mode: str


class FaultList(BaseModel):
    items: list[Fault]


SettleOutcome = Literal[
    "approve",
    "reject",
    "cancel",
    "mediation",
    "mediation_won",
    "mediation_lost",
    "chargeback",
    "chargeback_won",
    "chargeback_lost",
]


class SettleRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    payment_intent_id: str = Field(min_length=1, max_length=64)
    outcome: SettleOutcome = Field(
        description="approve / reject: a payment left in process (both providers). Provider B "
        "only: cancel (a pending or in-process payment), mediation, mediation_won, "
        "mediation_lost, chargeback, chargeback_won, chargeback_lost (after the payment)."
    )
    provider: ProviderId | None = Field(
        None, description="Only this provider's payments (default: both)."
    )


class Settled(BaseModel):
    payment_intent_id: str
    provider: str
    outcome: str
    references: list[str] = Field(
        description="Provider A tokens or provider B payment ids settled."
    )


class NotifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    payment_intent_id: str = Field(min_length=1, max_length=64)
    style: Literal["webhook", "ipn"] = Field(
        "webhook",
        description="webhook: `?data.id=..&type=..`, signed (x-signature); ipn: the older "
        "`?topic=..&id=..`, unsigned.",
    )
    topic: Literal["payment", "merchant_order"] = "payment"
    copies: Annotated[
        int, Field(ge=1, le=5, description="Each notice this many times (duplicates)."), WHOLE_NUMBER
    ] = 1
    order: Literal["oldest_first", "newest_first"] = Field(
        "oldest_first", description="newest_first sends the latest payment's notice first."
    )


class Notified(BaseModel):
    payment_intent_id: str
    notifications: int = Field(description="How many notices were sent, in order.")
    payment_ids: list[str] = Field(description="The provider B payments they name, in order.")
