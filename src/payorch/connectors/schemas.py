"""Request and response models of connectors (provider configurations)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from payorch.clock import isoformat
from payorch.providers import PROVIDER_A, PROVIDER_B, PROVIDER_IDS


class Mode(StrEnum):
    MOCK = "MOCK"
    SANDBOX = "SANDBOX"
    PRODUCTION = "PRODUCTION"


MAX_PRIORITY = 1_000_000
ModeName = Literal["MOCK", "SANDBOX", "PRODUCTION"]  # strict models take the text, not the enum

# The credential fields each provider needs (docs/api.md, Connectors), and nothing else.
CREDENTIAL_FIELDS: dict[str, tuple[str, ...]] = {
    PROVIDER_A: ("commerce_code", "api_key"),
    PROVIDER_B: ("access_token", "webhook_secret"),
}

CredentialValue = Annotated[
    str, StringConstraints(min_length=1, max_length=512, strip_whitespace=True)
]
Credentials = dict[str, CredentialValue]
Priority = Annotated[int, Field(ge=0, le=MAX_PRIORITY, description="Lower wins.")]


class CreateConnector(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: Annotated[str, Field(description=f"One of {', '.join(PROVIDER_IDS)}.")]
    mode: ModeName
    enabled: bool = True
    priority: Priority = 1
    credentials: Credentials | None = Field(
        None,
        description="Write-only. provider_a_redirect_post: commerce_code, api_key; "
        "provider_b_redirect_get: access_token, webhook_secret. Required for SANDBOX and "
        "PRODUCTION; MOCK needs none.",
        json_schema_extra={"writeOnly": True},
    )


class UpdateConnector(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    mode: ModeName | None = None
    enabled: bool | None = None
    priority: Priority | None = None
    credentials: Credentials | None = Field(None, json_schema_extra={"writeOnly": True})


class Connector(BaseModel):
    id: str
    merchant_account_id: str
    provider: str
    mode: ModeName
    enabled: bool
    priority: int
    has_credentials: bool
    created_at: str
    updated_at: str


class ConnectorList(BaseModel):
    items: list[Connector]


def connector_body(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "merchant_account_id": row.merchant_account_id,
        "provider": row.provider,
        "mode": row.mode,
        "enabled": row.enabled,
        "priority": row.priority,
        "has_credentials": row.credentials is not None,
        "created_at": isoformat(row.created_at),
        "updated_at": isoformat(row.updated_at),
    }
