"""The dashboard domain's records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class DashboardSession:
    """A signed-in browser; ``id`` is the SHA-256 of the cookie's token, never the token."""

    id: str
    application_id: str
    credential_id: str
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class ActiveSession:
    """A session that is still valid, with what the pages need to act for its application."""

    session_id: str
    application_id: str
    credential_id: str
    environment: str
