"""Request and response models of the simulator controls."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from payorch.simulator.registry import BY_NAME

_NAMES = list(BY_NAME)


def _known(value: object) -> object:
    """A registered provider's id or simulator name, refused in the words pydantic uses for an
    enum of them (the document lists the same names)."""
    if isinstance(value, str) and value in BY_NAME:
        return value
    listed = ", ".join(repr(name) for name in _NAMES[:-1]) + f" or {_NAMES[-1]!r}"
    raise ValueError(f"Input should be {listed}")


# A provider's id of the API or the simulator's name for it (both accepted).
ProviderName = Annotated[str, BeforeValidator(_known), Field(json_schema_extra={"enum": _NAMES})]


class FaultRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    provider: ProviderName
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
    provider: ProviderName | None = Field(
        None, description="Only this provider's payments (default: both)."
    )


class Settled(BaseModel):
    payment_intent_id: str
    provider: str
    outcome: str
    references: list[str] = Field(
        description="Provider A tokens or provider B payment ids settled."
    )
