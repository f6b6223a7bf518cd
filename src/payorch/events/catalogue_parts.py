"""The objects nested in event payloads (payorch.events.catalogue): why a payment did not go
through, and the routing record of a checkout. Each mirrors what its writer builds
(providers/payment_errors.py ``last_payment_error``, routing/record.py ``as_json``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from payorch.providers.payment_errors import PaymentErrorCode
from payorch.routing.record import SkipReason, Strategy


class Strict(BaseModel):
    """A payload part: an unknown field is refused (the catalogue is the only statement)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class LastPaymentError(Strict):
    """Why the payment did not go through (docs/api.md, "Why a payment failed")."""

    code: PaymentErrorCode = Field(description="payorch's code: the same for every provider.")
    message: str = Field(description="payorch's words for the code.")
    provider: str | None = Field(description="The provider that answered.")
    provider_code: str | None = Field(description="The provider's own code, as it sent it.")
    provider_message: str | None = Field(description="The provider's words, or its documented meaning.")
    at: str = Field(json_schema_extra={"format": "date-time"})


class RoutingScore(Strict):
    rate: float | None = Field(description="The authorization rate in the window, 0 to 1; null: no data yet.")
    attempts: int


class RoutingCandidate(Strict):
    provider: str
    priority: int
    weight: int | None = Field(description="A split's share, in percent.")
    score: RoutingScore | None


class RoutingSkipped(Strict):
    provider: str
    reason: SkipReason
    detail: str


class Routing(Strict):
    """Why the checkout went where it went (docs/routing.md, "The record")."""

    strategy: Strategy
    rule: str | None
    version: int | None
    candidates: list[RoutingCandidate]
    skipped: list[RoutingSkipped]
    chosen: str | None
    fallback: str | None
