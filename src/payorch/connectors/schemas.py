"""Request and response models of connectors (provider configurations)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from payorch.clock import isoformat
from payorch.connectors.records import Connector
from payorch.http.schemas import WHOLE_NUMBER
from payorch.providers.registry import PROVIDER_IDS, REGISTRATIONS

MAX_PRIORITY = 1_000_000
ModeName = Literal["MOCK", "SANDBOX", "PRODUCTION"]  # strict models take the text, not the enum

CredentialValue = Annotated[str, StringConstraints(min_length=1, max_length=512, strip_whitespace=True)]
Credentials = dict[str, CredentialValue]
Priority = Annotated[int, Field(ge=0, le=MAX_PRIORITY, description="Lower wins."), WHOLE_NUMBER]


class CreateConnector(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    provider: Annotated[str, Field(description=f"One of {', '.join(PROVIDER_IDS)}.")]
    mode: ModeName
    enabled: bool = True
    priority: Priority = 1
    credentials: Credentials | None = Field(
        None,
        description="Write-only. "
        + "; ".join(f"{r.provider_id}: {', '.join(r.credential_fields)}" for r in REGISTRATIONS)
        + ". Required for SANDBOX and PRODUCTION; MOCK needs none.",
        json_schema_extra={"writeOnly": True},
    )


class UpdateConnector(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    mode: ModeName | None = None
    enabled: bool | None = None
    priority: Priority | None = None
    credentials: Credentials | None = Field(None, json_schema_extra={"writeOnly": True})


class ConnectorResponse(BaseModel):
    id: str
    merchant_account_id: str
    provider: str
    mode: ModeName
    enabled: bool
    priority: int
    has_credentials: bool
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, connector: Connector) -> ConnectorResponse:
        return cls(
            id=connector.id,
            merchant_account_id=connector.merchant_account_id,
            provider=connector.provider,
            mode=connector.mode.value,
            enabled=connector.enabled,
            priority=connector.priority,
            has_credentials=connector.has_credentials,
            created_at=isoformat(connector.created_at),
            updated_at=isoformat(connector.updated_at),
        )


class ConnectorList(BaseModel):
    items: list[ConnectorResponse]
