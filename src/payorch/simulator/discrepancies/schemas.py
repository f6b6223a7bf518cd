"""Request and answer of the discrepancy control (docs/simulator.md, "Discrepancies")."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from payorch.http.schemas import WHOLE_NUMBER
from payorch.providers.registry import get_adapter
from payorch.simulator.controls.schemas import ProviderName
from payorch.simulator.discrepancies.records import DiscrepancyKind
from payorch.simulator.registry import BY_NAME


def _orphan_currencies() -> dict[str, list[str]]:
    """Each name of a provider that can show an orphan -> the currencies it takes (an orphan is
    a sale made at it: the default CLP among them)."""
    return {
        name: sorted(get_adapter(simulated.provider_id).supported_currencies)
        for name, simulated in BY_NAME.items()
        if simulated.discrepancies.orphan is not None
    }


ORPHANS = _orphan_currencies()
_ABSENT: JsonDict = {"type": "null"}  # absent or null


def _per_kind(schema: JsonDict) -> None:
    """The document states what the model checks: the fields of each kind, and for an orphan
    the providers that can show one with the currencies each takes."""
    intent: JsonDict = {"type": "string"}
    variants: list[JsonDict] = [
        {
            "properties": {
                "kind": {"const": "refunded_at_provider"},
                "payment_intent_id": intent,
                "currency": _ABSENT,
            },
            "required": ["payment_intent_id"],
        },
        {
            "properties": {
                "kind": {"const": "approved_unreturned"},
                "payment_intent_id": intent,
                "amount": _ABSENT,
                "currency": _ABSENT,
            },
            "required": ["payment_intent_id"],
        },
        {
            "properties": {"kind": {"const": "amount_changed"}, "payment_intent_id": intent},
            "required": ["payment_intent_id"],
            "anyOf": [
                {"properties": {"amount": {"type": "integer"}}, "required": ["amount"]},
                {"properties": {"currency": {"type": "string"}}, "required": ["currency"]},
            ],
        },
    ]
    for name, currencies in ORPHANS.items():
        variants.append(
            {
                "properties": {
                    "kind": {"const": "orphan"},
                    "provider": {"const": name},
                    "payment_intent_id": _ABSENT,
                    "amount": {"type": "integer"},
                    "currency": {"anyOf": [{"enum": list(currencies)}, _ABSENT]},
                },
                "required": ["amount"],
            }
        )
    schema["oneOf"] = list(variants)


KINDS_DESCRIPTION = (
    "refunded_at_provider: the intent's payment refunded at the provider (`amount`, default the "
    "rest), payorch not told; approved_unreturned: the intent's open checkout approved, the buyer "
    "never comes back and the provider's notifications are given up unsent; amount_changed: the "
    "provider's record of the intent's payment shows `amount` and/or `currency`; orphan: a paid "
    "payment at the provider that no intent made (`amount`, `currency`; not at provider A, whose "
    "reconciliation reads only payorch's tokens)."
)


class DiscrepancyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_per_kind)
    provider: ProviderName
    kind: DiscrepancyKind = Field(description=KINDS_DESCRIPTION)
    payment_intent_id: str | None = Field(None, min_length=1, max_length=64)
    amount: Annotated[
        int | None, Field(ge=1, le=10**13, description="Minor units of the currency."), WHOLE_NUMBER
    ] = None
    currency: str | None = Field(None, pattern="^[A-Z]{3}$")

    @model_validator(mode="after")
    def _fields_of_kind(self) -> DiscrepancyRequest:
        if (self.kind == "orphan") == (self.payment_intent_id is not None):
            raise ValueError("payment_intent_id is required for every kind but orphan, which takes none")
        if self.kind == "orphan" and self.amount is None:
            raise ValueError("an orphan needs its amount")
        if self.kind == "orphan" and self.provider not in ORPHANS:
            raise ValueError(f"{self.provider} cannot show an orphan to reconciliation")
        taken = ORPHANS.get(self.provider, [])
        if self.kind == "orphan" and self.currency is not None and self.currency not in taken:
            raise ValueError(f"an orphan at {self.provider} is in one of {', '.join(taken)}")
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
