"""Invite links: a random token shown once (in the invite URL), only its SHA-256 stored
(users.invite_hash); it works once, for INVITE_HOURS."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Final

INVITE_HOURS: Final = 72
TOKEN_BYTES: Final = 32
# The dashboard's page that accepts an invite (sets the password): {public_url}{INVITE_PATH}{token}
INVITE_PATH: Final = "/dashboard/invite/"


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def hash_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def expiry(now: datetime) -> datetime:
    return now + timedelta(hours=INVITE_HOURS)


def invite_url(public_url: str, token: str) -> str:
    return f"{public_url.rstrip('/')}{INVITE_PATH}{token}"
