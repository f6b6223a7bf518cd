"""A merchant's routing program as the API takes it: a default and an ordered list of rules
(docs/routing.md). Stored as this model's JSON in a routing version; checked by checks.py."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from payorch import money
from payorch.http.schemas import WHOLE_NUMBER
from payorch.intents.schemas import MAX_METADATA_KEY_LENGTH, MAX_METADATA_VALUE_LENGTH, CurrencyCode
from payorch.providers.registry import PROVIDER_IDS

# A tenant-growable collection has a cap: rules per version (docs/routing.md, "Limits").
MAX_RULES = 50
MAX_LISTED_CURRENCIES = 20
MAX_METADATA_CONDITIONS = 10
MAX_OUTCOME_PROVIDERS = 10
# A buyer declined this many times has tried every provider worth trying (docs/routing.md).
MAX_DECLINE_ATTEMPTS = 5

Default = Literal["priority", "success_rate"]
# Documented as the enum; checks.py refuses another name in words naming the rule.
ProviderId = Annotated[str, Field(max_length=64, json_schema_extra={"enum": list(PROVIDER_IDS)})]
Amount = Annotated[int, Field(ge=0, le=money.MAX_AMOUNT), WHOLE_NUMBER]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


class AmountRange(_Model):
    gte: Annotated[Amount | None, Field(description="At least, in the intent's minor units.")] = None
    lt: Annotated[Amount | None, Field(description="Below, in the intent's minor units.")] = None


class Conditions(_Model):
    """Every condition given must hold; none given matches every intent."""

    currency: Annotated[
        list[CurrencyCode] | None,
        Field(max_length=MAX_LISTED_CURRENCIES, description="The intent's currency is one of these."),
    ] = None
    amount: AmountRange | None = None
    metadata: Annotated[
        dict[str, Annotated[str, Field(max_length=MAX_METADATA_VALUE_LENGTH)]] | None,
        Field(
            max_length=MAX_METADATA_CONDITIONS,
            description="Each key's value in the intent's metadata equals the one given.",
            # An intent's key lengths, for the document; checks.py refuses others naming the rule.
            json_schema_extra={"propertyNames": {"minLength": 1, "maxLength": MAX_METADATA_KEY_LENGTH}},
        ),
    ] = None

    @field_validator("currency")
    @classmethod
    def _currencies(cls, value: list[str] | None) -> list[str] | None:
        for code in value or []:
            problem = money.currency_problem(code)
            if problem is not None:
                raise ValueError(f"{code}: {problem}")
        return value


class PriorityOutcome(_Model):
    priority: Annotated[
        list[ProviderId],
        Field(min_length=1, max_length=MAX_OUTCOME_PROVIDERS, description="Tried in this order."),
    ]


class Share(_Model):
    provider: ProviderId
    # A number, so that 70.5 reaches the checks and is refused naming its rule.
    weight: Annotated[int | float, Field(description="A whole percentage; a split's add up to 100.")]


class SplitOutcome(_Model):
    split: Annotated[list[Share], Field(min_length=1, max_length=MAX_OUTCOME_PROVIDERS)]


class Rule(_Model):
    name: Annotated[str, Field(min_length=1, max_length=64)]
    if_: Annotated[Conditions, Field(alias="if", description="Empty: matches every intent.")]
    then: PriorityOutcome | SplitOutcome


class OnDecline(_Model):
    """A second chance after a soft decline (docs/routing.md, "A second chance after a decline")."""

    retry: Annotated[
        bool,
        Field(
            description="true: a retryable decline offers the buyer the next provider; false: it ends FAILED."
        ),
    ]
    max_attempts: Annotated[
        int,
        Field(
            ge=2,
            le=MAX_DECLINE_ATTEMPTS,
            description="Checkouts a buyer may try in all, the first included.",
        ),
        WHOLE_NUMBER,
    ] = 3


class RoutingProgram(_Model):
    default: Annotated[
        Default,
        Field(description="When no rule matches: the connectors' priority, or the success-rate strategy."),
    ] = "priority"
    rules: Annotated[
        list[Rule], Field(max_length=MAX_RULES, description="Tried in order; the first match decides.")
    ] = []
    on_decline: Annotated[
        OnDecline | None,
        Field(description="Absent: a decline ends the payment FAILED, whatever its code."),
    ] = None

    def as_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
