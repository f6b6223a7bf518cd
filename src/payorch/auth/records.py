"""The auth domain's records, as its repository returns them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ApiCredential:
    """One API key of an application; only the SHA-256 of its secret part is kept."""

    id: str
    application_id: str
    name: str | None
    prefix: str
    secret_hash: str  # never returned
    created_at: datetime
    revoked_at: datetime | None
    scopes: list[str] | None = None  # None: every scope
    expires_at: datetime | None = None
    last_used_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """What authenticating a key needs: the credential and its application's environment."""

    credential_id: str
    application_id: str
    environment: str
    secret_hash: str
    revoked: bool
    scopes: frozenset[str] | None  # None: every scope
    expires_at: datetime | None
    last_used_at: datetime | None


@dataclass(frozen=True, slots=True)
class IssuedCredential:
    """A credential just created, with the plain key (shown once, never stored)."""

    credential: ApiCredential
    environment: str
    api_key: str
