"""Request and response models of API credentials administration."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from payorch.auth.records import ApiCredential, IssuedCredential
from payorch.clock import isoformat
from payorch.http.listing import PageQuery, id_cursor
from payorch.pagination import Page


class CreateApiCredential(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[
        str | None, Field(min_length=1, max_length=200, examples=["checkout server"])
    ] = None


class ApiCredentialResponse(BaseModel):
    id: str
    name: str | None
    prefix: str
    environment: Literal["SANDBOX", "PRODUCTION"]
    created_at: str
    revoked_at: str | None = Field(None, description="Set once revoked; the key is then refused.")


class CreatedApiCredential(BaseModel):
    id: str
    name: str | None
    prefix: str
    environment: Literal["SANDBOX", "PRODUCTION"]
    api_key: str = Field(description="Shown only in this answer: only a hash is kept.")
    created_at: str


class ApiCredentialList(BaseModel):
    items: list[ApiCredentialResponse]
    next_cursor: str | None


class CredentialListQuery(PageQuery):
    cursor: Annotated[str | None, id_cursor("key")] = None


def credential_body(credential: ApiCredential, environment: str) -> dict[str, object]:
    return {
        "id": credential.id,
        "name": credential.name,
        "prefix": credential.prefix,
        "environment": environment,
        "created_at": isoformat(credential.created_at),
        "revoked_at": (
            isoformat(credential.revoked_at) if credential.revoked_at is not None else None
        ),
    }


def credential_page_body(page: Page[ApiCredential], environment: str) -> dict[str, object]:
    return {
        "items": [credential_body(c, environment) for c in page.items],
        "next_cursor": page.next_cursor,
    }


def issued_body(issued: IssuedCredential) -> dict[str, object]:
    credential = issued.credential
    return {
        "id": credential.id,
        "name": credential.name,
        "prefix": credential.prefix,
        "environment": issued.environment,
        "api_key": issued.api_key,
        "created_at": isoformat(credential.created_at),
    }
