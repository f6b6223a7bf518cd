"""Request and response models of the market controls."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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


class MarketRequest(MarketShares):
    model_config = ConfigDict(extra="forbid", strict=True)
    provider: ProviderName

    @model_validator(mode="after")
    def _whole(self) -> MarketRequest:
        total = self.approve + self.decline + self.give_up + self.pending
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"approve, decline, give_up and pending add up to {total:g}, not 1")
        return self


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
