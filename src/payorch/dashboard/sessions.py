"""Dashboard sessions: an opaque random token in an HttpOnly cookie, stored as its SHA-256.

The CSRF token of a session is an HMAC of the fixed word "csrf" keyed by the session's token:
the page knows it, another site cannot compute it (the cookie is HttpOnly), and nothing more is
stored. Before sign-in, the form's token is a double submit of a random pre-session cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.dashboard import repository
from payorch.dashboard.records import ActiveSession, DashboardSession

TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def session_id_of(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_of(token: str) -> str:
    return hmac.new(token.encode(), b"csrf", hashlib.sha256).hexdigest()


def csrf_matches(token: str, submitted: str | None) -> bool:
    # As bytes: compare_digest raises TypeError for a str holding a non-ASCII character.
    return submitted is not None and hmac.compare_digest(csrf_of(token).encode(), submitted.encode())


async def open_session(conn: AsyncConnection, clock: Clock, caller: Caller, lifetime_seconds: int) -> str:
    """A new session for the key of ``caller``; returns the cookie's token (never stored)."""
    token = new_token()
    now = clock.now()
    await repository.delete_expired(conn, now)  # sign-in is rare: it sweeps the stale rows
    await repository.insert_session(
        conn,
        DashboardSession(
            id=session_id_of(token),
            application_id=caller.application_id,
            credential_id=caller.credential_id,
            created_at=now,
            last_seen_at=now,
            expires_at=now + timedelta(seconds=lifetime_seconds),
        ),
    )
    return token


async def find_session(conn: AsyncConnection, clock: Clock, token: str) -> ActiveSession | None:
    """The session of ``token`` if it has not expired and its key is not revoked."""
    return await repository.find_active(conn, session_id_of(token), clock.now())


async def close_session(conn: AsyncConnection, token: str) -> None:
    await repository.delete_session(conn, session_id_of(token))
