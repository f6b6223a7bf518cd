"""The dashboard domain's records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class DashboardSession:
    """A signed-in browser; ``id`` is the SHA-256 of the cookie's token, never the token."""

    id: str
    application_id: str
    credential_id: str | None  # the key signed in with; None for a person
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime
    user_id: str | None = None
    stage: str = "ACTIVE"  # PASSWORD: a second factor is next
    challenge: str | None = None


@dataclass(frozen=True, slots=True)
class ActiveSession:
    """A session that is still valid, with what the pages need to act for its application."""

    session_id: str
    application_id: str
    credential_id: str
    environment: str
