"""Request and response models of the simulator controls."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from payorch.http.schemas import WHOLE_NUMBER
from payorch.simulator.registry import BY_NAME, SIMULATED

_NAMES = list(BY_NAME)


def _known(value: object) -> object:
    """A registered provider's id or simulator name, refused in the words pydantic uses for an
    enum of them (the document lists the same names)."""
    if isinstance(value, str) and value in BY_NAME:
        return value
    listed = ", ".join(repr(name) for name in _NAMES[:-1]) + f" or {_NAMES[-1]!r}"
    raise ValueError(f"Input should be {listed}")


# What the settle control moves, and the references it answers, per registered provider.
SETTLES = " ".join(f"{s.registration.display_name}: {s.settles}." for s in SIMULATED)
SETTLE_REFERENCES = "; ".join(f"{s.registration.display_name}: {s.settle_references}" for s in SIMULATED)

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
        description="approve / reject: a payment left in process; cancel: a pending or "
        "in-process payment; mediation, chargeback and their ends (_won, _lost): after the "
        "payment. Which of them each provider takes is in the operation's description; a "
        "provider with nothing to move answers 404."
    )
    provider: ProviderName | None = Field(
        None, description="Only this provider's payments (default: every provider's)."
    )


class Settled(BaseModel):
    payment_intent_id: str
    provider: str
    outcome: str
    references: list[str] = Field(description=f"What moved, in the provider's words: {SETTLE_REFERENCES}.")


# The longest move of the clock control: past any simulated hold's window.
LONGEST_ADVANCE = 90 * 86400
HOLDING = ", ".join(s.registration.display_name for s in SIMULATED if s.holds is not None)
# The names (ids and simulator names) of the providers that hold: the clock control takes only these.
_HOLDING_NAMES = [name for name, simulated in BY_NAME.items() if simulated.holds is not None]


def _holding(value: object) -> object:
    """A provider that holds, by id or simulator name; another is refused in pydantic's words
    for an enum of them (the document lists the same names)."""
    if isinstance(value, str) and value in _HOLDING_NAMES:
        return value
    listed = ", ".join(repr(name) for name in _HOLDING_NAMES[:-1]) + f" or {_HOLDING_NAMES[-1]!r}"
    raise ValueError(f"Input should be {listed} (a provider that can hold)")


HoldingProviderName = Annotated[
    str, BeforeValidator(_holding), Field(json_schema_extra={"enum": _HOLDING_NAMES})
]


class ClockRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    advance_seconds: Annotated[
        int,
        Field(
            ge=1,
            le=LONGEST_ADVANCE,
            description="How far the clock of this application's holds moves forward.",
        ),
        WHOLE_NUMBER,
    ]
    provider: HoldingProviderName | None = Field(
        None, description="Only this provider's holds (default: every provider's that holds)."
    )


class Lapsed(BaseModel):
    provider: str
    references: list[str] = Field(
        description="The holds that lapsed, in the provider's words (A: tokens; C: PaymentIntent ids)."
    )


class Clocked(BaseModel):
    advanced_seconds: int
    lapsed: list[Lapsed] = Field(description="Per provider that holds, in registration order.")
