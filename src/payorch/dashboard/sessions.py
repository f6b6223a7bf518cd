"""Dashboard sessions: an opaque random token in an HttpOnly cookie, stored as its SHA-256.

A person's session starts at stage PASSWORD when a second factor is next (it opens no page but
the second factor's, and lasts the idle time at most), then is ACTIVE. An ACTIVE session ends
after PAYORCH_DASHBOARD_IDLE_SECONDS without a page view (``last_seen_at``, written at most once
a minute) or PAYORCH_DASHBOARD_SESSION_SECONDS after sign-in, whichever comes first.

The CSRF token of a session is an HMAC of the fixed word "csrf" keyed by the session's token:
the page knows it, another site cannot compute it (the cookie is HttpOnly), and nothing more is
stored. Before sign-in, the form's token is a double submit of a random pre-session cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.config import Settings
from payorch.dashboard import repository
from payorch.dashboard.records import ActiveSession, DashboardSession, PendingSession, Stage

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


# A page view is written down at most this often per session (idle expiry is that much coarser).
TOUCH_EVERY_SECONDS = 60


def _session(
    application_id: str,
    token: str,
    now: datetime,
    lifetime_seconds: int,
    *,
    credential_id: str | None = None,
    user_id: str | None = None,
    stage: Stage = "ACTIVE",
) -> DashboardSession:
    return DashboardSession(
        id=session_id_of(token),
        application_id=application_id,
        credential_id=credential_id,
        user_id=user_id,
        stage=stage,
        created_at=now,
        last_seen_at=now,
        expires_at=now + timedelta(seconds=lifetime_seconds),
    )


async def open_key_session(conn: AsyncConnection, clock: Clock, caller: Caller, settings: Settings) -> str:
    """A new session for the key of ``caller``; returns the cookie's token (never stored)."""
    token = new_token()
    now = clock.now()
    await repository.delete_expired(conn, now, settings.dashboard_idle_seconds)  # sign-in is rare: it sweeps
    session = _session(
        caller.application_id,
        token,
        now,
        settings.dashboard_session_seconds,
        credential_id=caller.credential_id,
    )
    await repository.insert_session(conn, session)
    return token


async def open_person_session(
    conn: AsyncConnection, clock: Clock, application_id: str, user_id: str, stage: Stage, settings: Settings
) -> str:
    """A new session for the person ``user_id``: ACTIVE, or PASSWORD (a second factor is next,
    within the idle time); returns the cookie's token (never stored)."""
    token = new_token()
    now = clock.now()
    await repository.delete_expired(conn, now, settings.dashboard_idle_seconds)
    lifetime = settings.dashboard_session_seconds if stage == "ACTIVE" else settings.dashboard_idle_seconds
    session = _session(application_id, token, now, lifetime, user_id=user_id, stage=stage)
    await repository.insert_session(conn, session)
    return token


async def activate(
    conn: AsyncConnection, clock: Clock, token: str, session: PendingSession, settings: Settings
) -> str:
    """The PASSWORD-stage session of ``token`` is signed in: it is replaced by an ACTIVE one with
    a new token (a token seen before the second factor never opens a page); its 12 hours start
    now. Returns the new cookie's token."""
    await close_session(conn, token)
    return await open_person_session(conn, clock, session.application_id, session.user_id, "ACTIVE", settings)


async def find_session(
    conn: AsyncConnection, clock: Clock, token: str, idle_seconds: int
) -> ActiveSession | None:
    """The ACTIVE session of ``token`` if it has not expired (idle or absolute) and its key or
    person still may sign in."""
    return await repository.find_active(conn, session_id_of(token), clock.now(), idle_seconds)


async def find_pending(conn: AsyncConnection, clock: Clock, token: str) -> PendingSession | None:
    """The PASSWORD-stage session of ``token`` if it has not expired."""
    return await repository.find_pending(conn, session_id_of(token), clock.now())


def needs_touch(session: ActiveSession, clock: Clock) -> bool:
    return (clock.now() - session.last_seen_at).total_seconds() >= TOUCH_EVERY_SECONDS


async def touch(conn: AsyncConnection, clock: Clock, session: ActiveSession) -> None:
    await repository.touch(conn, session.session_id, clock.now(), TOUCH_EVERY_SECONDS)


async def keep_challenge(conn: AsyncConnection, token: str, challenge: str | None) -> None:
    await repository.set_challenge(conn, session_id_of(token), challenge)


async def close_session(conn: AsyncConnection, token: str) -> None:
    await repository.delete_session(conn, session_id_of(token))
