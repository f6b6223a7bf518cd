"""Request and response models of the simulator controls."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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


class SettleRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    payment_intent_id: str = Field(min_length=1, max_length=64)
    outcome: Literal["approve", "reject"]
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
