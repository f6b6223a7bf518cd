"""Request and response models of API credentials administration."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from payorch.access.scopes import SCOPES
from payorch.auth.records import ApiCredential, IssuedCredential
from payorch.clock import isoformat, parse_rfc3339
from payorch.http.listing import PageQuery, id_cursor
from payorch.pagination import Page

RFC3339_HELP = "must be an RFC 3339 timestamp with its zone, such as 2026-12-31T23:59:59Z"


def _rfc3339(value: object) -> object:
    """An RFC 3339 timestamp with its zone, as a UTC datetime."""
    if not isinstance(value, str):
        return value  # strict: anything but a string is refused by the type itself
    moment = parse_rfc3339(value)
    if moment is None:
        raise PydanticCustomError("rfc3339", RFC3339_HELP)
    return moment


Rfc3339 = Annotated[
    datetime,
    BeforeValidator(_rfc3339),
    WithJsonSchema({"type": "string", "format": "date-time"}, mode="validation"),
]

SCOPES_HELP = (
    "The scopes the key holds (docs/access.md, Scopes); left out: every scope. Each named once, "
    "at least one; only scopes the calling key holds itself (403 FORBIDDEN otherwise)."
)


class CreateApiCredential(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str | None, Field(min_length=1, max_length=200, examples=["checkout server"])] = None
    # Checked by the service (payorch.auth.credentials.checked_scopes), for the dashboard's and
    # the command line's keys too; the document states the same.
    scopes: Annotated[
        Annotated[
            list[str],
            WithJsonSchema(
                {
                    "type": "array",
                    "items": {"type": "string", "enum": list(SCOPES)},
                    "minItems": 1,
                    "uniqueItems": True,
                },
                mode="validation",
            ),
        ]
        | None,
        Field(description=SCOPES_HELP, examples=[["payment_intents:read", "payment_intents:write"]]),
    ] = None
    expires_at: Annotated[
        Rfc3339 | None,
        Field(description="When the key stops working (in the future); left out: never."),
    ] = None


class ApiCredentialResponse(BaseModel):
    id: str
    name: str | None
    prefix: str
    environment: Literal["SANDBOX", "PRODUCTION"]
    created_at: str
    revoked_at: str | None = Field(None, description="Set once revoked; the key is then refused.")
    scopes: list[str] | None = Field(description="The key's scopes; null: every scope.")
    expires_at: str | None = Field(description="When the key stops working; null: never.")
    last_used_at: str | None = Field(
        description="When the key was last used, to the minute (written at most once a minute)."
    )


class CreatedApiCredential(BaseModel):
    id: str
    name: str | None
    prefix: str
    environment: Literal["SANDBOX", "PRODUCTION"]
    api_key: str = Field(description="Shown only in this answer: only a hash is kept.")
    created_at: str
    scopes: list[str] | None = Field(description="The key's scopes; null: every scope.")
    expires_at: str | None = Field(description="When the key stops working; null: never.")
    last_used_at: str | None = Field(description="Null: not used yet.")


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
        "revoked_at": _moment(credential.revoked_at),
        **_access(credential),
    }


def _moment(at: datetime | None) -> str | None:
    return isoformat(at) if at is not None else None


def _access(credential: ApiCredential) -> dict[str, object]:
    return {
        "scopes": credential.scopes,
        "expires_at": _moment(credential.expires_at),
        "last_used_at": _moment(credential.last_used_at),
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
        **_access(credential),
    }
