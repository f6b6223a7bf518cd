"""Request and answer of the discrepancy control (docs/simulator.md, "Discrepancies")."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from payorch.simulator.controls.schemas import ProviderName
from payorch.simulator.discrepancies.records import DiscrepancyKind

KINDS_DESCRIPTION = (
    "refunded_at_provider: the intent's payment refunded at the provider (`amount`, default the "
    "rest), payorch not told; approved_unreturned: the intent's open checkout approved, the buyer "
    "never comes back and the provider's notifications are given up unsent; amount_changed: the "
    "provider's record of the intent's payment shows `amount` and/or `currency`; orphan: a paid "
    "payment at the provider that no intent made (`amount`, `currency`; not at provider A, whose "
    "reconciliation reads only payorch's tokens)."
)


class DiscrepancyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    provider: ProviderName
    kind: DiscrepancyKind = Field(description=KINDS_DESCRIPTION)
    payment_intent_id: str | None = Field(None, min_length=1, max_length=64)
    amount: int | None = Field(None, ge=1, le=10**13, description="Minor units of the currency.")
    currency: str | None = Field(None, pattern="^[A-Z]{3}$")

    @model_validator(mode="after")
    def _fields_of_kind(self) -> DiscrepancyRequest:
        if (self.kind == "orphan") == (self.payment_intent_id is not None):
            raise ValueError("payment_intent_id is required for every kind but orphan, which takes none")
        if self.kind == "orphan" and self.amount is None:
            raise ValueError("an orphan needs its amount")
        if self.kind == "amount_changed" and self.amount is None and self.currency is None:
            raise ValueError("amount_changed needs a new amount, a new currency or both")
        if self.kind in ("refunded_at_provider", "approved_unreturned") and self.currency is not None:
            raise ValueError(f"{self.kind} takes no currency")
        if self.kind == "approved_unreturned" and self.amount is not None:
            raise ValueError("approved_unreturned takes no amount")
        return self


class DiscrepancyMade(BaseModel):
    provider: str
    kind: str
    payment_intent_id: str | None
    references: list[str] = Field(description="The provider's ids of what it now shows.")
