"""The dashboard domain's records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Stage = Literal["PASSWORD", "ACTIVE"]

# A session's challenge that starts with this holds a TOTP secret being enrolled, encrypted
# (payorch.crypto) after it; a WebAuthn challenge is not a secret.
TOTP_CHALLENGE = "totp:"


@dataclass(frozen=True, slots=True)
class DashboardSession:
    """A signed-in browser; ``id`` is the SHA-256 of the cookie's token, never the token."""

    id: str
    application_id: str
    credential_id: str | None  # the key signed in with (SANDBOX, behind a setting); None for a person
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    user_id: str | None = None
    stage: Stage = "ACTIVE"  # PASSWORD: the password matched, a second factor is next
    challenge: str | None = None


@dataclass(frozen=True, slots=True)
class ActiveSession:
    """A session that is still valid, with what the pages need to act for its application: the
    person's current role (read with the session, so a role change counts at the next request)
    or the key's scopes."""

    session_id: str
    application_id: str
    environment: str
    last_seen_at: datetime
    credential_id: str | None
    key_scopes: frozenset[str] | None  # a key's list; None = every scope
    user_id: str | None
    email: str | None
    role: str | None


@dataclass(frozen=True, slots=True)
class PendingSession:
    """A PASSWORD-stage session: the person typed the right password; a second factor (or its
    enrollment) is next. ``challenge`` holds what the next step checks against (a WebAuthn
    challenge, or a TOTP secret being enrolled, encrypted)."""

    session_id: str
    application_id: str
    user_id: str
    challenge: str | None
