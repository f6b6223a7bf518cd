"""The records of signing in (payorch.users.sign_in)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Passkey:
    id: str
    user_id: str
    credential_id: str  # base64url
    public_key: bytes
    sign_count: int
    name: str
    created_at: datetime
    last_used_at: datetime | None = None
