"""Request and response models of the market controls."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from payorch.simulator.controls.schemas import ProviderName

Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]


class MarketShares(BaseModel):
    approve: Probability = Field(description="The buyer pays and the provider authorizes.")
    decline: Probability = Field(description="The provider declines the payment.")
    give_up: Probability = Field(description="The buyer leaves without paying (not the provider's doing).")
    pending: Probability = Field(
        description="The payment is left in process at the provider (provider A has no such "
        "state: its buyer never comes back)."
    )


_OUTCOMES = ("approve", "decline", "give_up", "pending")


def _not_all_zero(schema: JsonDict) -> None:
    """The document states the rule the model checks: at least one weight above 0."""
    schema["anyOf"] = [{"properties": {name: {"exclusiveMinimum": 0}}} for name in _OUTCOMES]


class MarketRequest(MarketShares):
    """Weights, each 0 to 1 and not all 0: each outcome's chance is its share of their sum (0.6,
    0.3, 0.05, 0.05 as given; 1, 1, 0, 0 is half and half)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_not_all_zero)
    provider: ProviderName

    @model_validator(mode="after")
    def _some_weight(self) -> MarketRequest:
        if self.approve + self.decline + self.give_up + self.pending <= 0:
            raise ValueError("approve, decline, give_up and pending are all 0: give at least one a weight")
        return self

    def shares(self) -> tuple[float, float, float, float]:
        """approve, decline, give_up, pending as chances adding up to 1 (as given when they do)."""
        total = self.approve + self.decline + self.give_up + self.pending
        if math.isclose(total, 1.0, abs_tol=1e-9):
            return self.approve, self.decline, self.give_up, self.pending
        return self.approve / total, self.decline / total, self.give_up / total, self.pending / total


class Market(MarketShares):
    provider: str


class MarketList(BaseModel):
    items: list[Market]


class BuyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    payment_intent_id: str = Field(min_length=1, max_length=64)


class BuyerReturnOut(BaseModel):
    method: Literal["GET", "POST"]
    url: str = Field(description="For GET, the whole address the browser goes to (query included).")
    fields: dict[str, str] = Field(description="For POST, the form the browser sends.")


class Bought(BaseModel):
    payment_intent_id: str
    provider: str
    outcome: Literal["approve", "decline", "give_up", "pending"]
    references: list[str] = Field(description="What the buyer decided, in the provider's ids.")
    return_: BuyerReturnOut | None = Field(
        alias="return",
        description="Where the buyer's browser goes back to the shop, as the page sends it; "
        "null: the buyer does not come back.",
    )
    model_config = ConfigDict(populate_by_name=True)
