"""Response and request models of the routing API (docs/routing.md); the program itself is
program.py's."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from payorch import money
from payorch.clock import isoformat
from payorch.http.listing import PageQuery
from payorch.http.schemas import WHOLE_NUMBER
from payorch.intents.schemas import (
    MAX_METADATA_KEYS,
    CurrencyCode,
    ProviderChoice,
    checked_currency,
    checked_provider_choice,
)
from payorch.jsontypes import JsonObject
from payorch.providers import AUTO
from payorch.routing.program import Default, OnDecline, RoutingProgram, Rule
from payorch.routing.record_schemas import RoutingRecordResponse
from payorch.routing.records import RoutingVersion

VERSION_CURSOR = r"^[1-9][0-9]{0,8}$"
MAX_VERSION = 999_999_999


class RoutingVersionResponse(BaseModel):
    version: int | None = Field(
        description="null: no rules were ever saved; the connectors' priority decides."
    )
    active: bool
    default: Default
    rules: list[Rule]
    on_decline: OnDecline | None = Field(None, description="null: a decline ends the payment FAILED.")
    created_at: str | None
    activated_at: str | None

    model_config = ConfigDict(serialize_by_alias=True)


class RoutingVersionList(BaseModel):
    items: list[RoutingVersionResponse]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class VersionListQuery(PageQuery):
    cursor: Annotated[
        str | None,
        Field(
            pattern=VERSION_CURSOR, description="`next_cursor` of the previous page, passed back unchanged."
        ),
    ] = None


class NewRoutingVersion(RoutingProgram):
    """A program saved as the next version: a draft unless ``activate``."""

    activate: Annotated[
        bool,
        Field(description="true: active at once (as PUT); false: a draft, dry-run it, activate it later."),
    ] = False

    def program(self) -> RoutingProgram:
        return RoutingProgram(default=self.default, rules=self.rules, on_decline=self.on_decline)


class EvaluateRouting(BaseModel):
    """An intent's fields: the decision a checkout would get now (nothing is written)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    amount: Annotated[int, Field(gt=0, le=money.MAX_AMOUNT), WHOLE_NUMBER]
    currency: Annotated[CurrencyCode, AfterValidator(checked_currency)]
    metadata: Annotated[dict[str, str], Field(max_length=MAX_METADATA_KEYS)] = {}
    provider: Annotated[ProviderChoice, AfterValidator(checked_provider_choice)] = AUTO
    payment_intent_id: Annotated[
        str | None,
        Field(max_length=40, description="Whose hash places it in a split; absent: a new one."),
    ] = None
    version: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_VERSION,
            description="The version to dry-run (a draft or an earlier one); absent: the active one.",
        ),
        WHOLE_NUMBER,  # 155.0 is the version 155, as for every integer of a body
    ] = None


class Evaluation(BaseModel):
    provider: str | None = Field(
        description="The provider a checkout would go to now; null if none is available."
    )
    routing: RoutingRecordResponse


def version_body(version: RoutingVersion | None) -> JsonObject:
    if version is None:
        return {
            "version": None,
            "active": True,
            "default": "priority",
            "rules": [],
            "on_decline": None,
            "created_at": None,
            "activated_at": None,
        }
    body: JsonObject = {
        "version": version.version,
        "active": version.active,
        "default": version.program.get("default", "priority"),
        "rules": version.program.get("rules", []),
        "created_at": isoformat(version.created_at),
        "activated_at": isoformat(version.activated_at) if version.activated_at else None,
    }
    body["on_decline"] = version.program.get("on_decline")
    return body
