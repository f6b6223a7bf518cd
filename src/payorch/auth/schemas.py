"""Request and response models of API credentials administration."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from payorch.clock import isoformat


class CreateApiCredential(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[
        str | None, Field(min_length=1, max_length=200, examples=["checkout server"])
    ] = None


class ApiCredential(BaseModel):
    id: str
    name: str | None
    prefix: str
    environment: str
    created_at: str
    revoked_at: str | None = Field(None, description="Set once revoked; the key is then refused.")


class CreatedApiCredential(BaseModel):
    id: str
    name: str | None
    prefix: str
    environment: str
    api_key: str = Field(description="Shown only in this answer: only a hash is kept.")
    created_at: str


class ApiCredentialList(BaseModel):
    items: list[ApiCredential]


def credential_body(row: Any, environment: str) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "prefix": row.prefix,
        "environment": environment,
        "created_at": isoformat(row.created_at),
        "revoked_at": isoformat(row.revoked_at) if row.revoked_at is not None else None,
    }
