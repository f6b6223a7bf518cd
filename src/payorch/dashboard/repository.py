"""All SQL of the dashboard's sessions (records.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, delete, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.dashboard.records import ActiveSession, DashboardSession, PendingSession
from payorch.db.records import column_values
from payorch.db.tables import api_credentials, applications
from payorch.db.tables.dashboard import dashboard_sessions
from payorch.db.tables.people import users

# The one read of other domains' tables here, joined because it is the point: a key's session is
# valid only while the key is neither revoked nor expired (revoking it ends its sessions at once),
# a person's only while they are ACTIVE, with the role they hold now (a demotion counts at their
# next request); the application's environment comes in the same round trip.
_ACTIVE = (
    select(
        dashboard_sessions.c.id,
        dashboard_sessions.c.application_id,
        dashboard_sessions.c.credential_id,
        dashboard_sessions.c.user_id,
        dashboard_sessions.c.last_seen_at,
        applications.c.environment,
        api_credentials.c.scopes,
        users.c.email,
        users.c.role,
    )
    .join(applications, applications.c.id == dashboard_sessions.c.application_id)
    .outerjoin(api_credentials, api_credentials.c.id == dashboard_sessions.c.credential_id)
    .outerjoin(users, users.c.id == dashboard_sessions.c.user_id)
    .where(dashboard_sessions.c.stage == "ACTIVE")
)


async def insert_session(conn: AsyncConnection, session: DashboardSession) -> None:
    await conn.execute(insert(dashboard_sessions).values(column_values(session)))


def _scopes(value: object) -> frozenset[str] | None:
    if not isinstance(value, list):
        return None  # null: every scope
    return frozenset(str(scope) for scope in value)


async def find_active(
    conn: AsyncConnection, session_id: str, now: datetime, idle_seconds: int
) -> ActiveSession | None:
    """The ACTIVE session ``session_id`` if neither its absolute nor its idle expiry passed and
    its key or person still may sign in."""
    query = _ACTIVE.where(
        dashboard_sessions.c.id == session_id,
        dashboard_sessions.c.expires_at > now,
        dashboard_sessions.c.last_seen_at > now - timedelta(seconds=idle_seconds),
        or_(
            and_(
                dashboard_sessions.c.credential_id.is_not(None),
                api_credentials.c.revoked_at.is_(None),
                or_(api_credentials.c.expires_at.is_(None), api_credentials.c.expires_at > now),
            ),
            and_(dashboard_sessions.c.user_id.is_not(None), users.c.status == "ACTIVE"),
        ),
    )
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    return ActiveSession(
        session_id=row.id,
        application_id=row.application_id,
        environment=row.environment,
        last_seen_at=row.last_seen_at,
        credential_id=row.credential_id,
        key_scopes=_scopes(row.scopes),
        user_id=row.user_id,
        email=row.email,
        role=row.role,
    )


async def find_pending(conn: AsyncConnection, session_id: str, now: datetime) -> PendingSession | None:
    """The PASSWORD-stage session ``session_id`` if it has not expired."""
    query = select(
        dashboard_sessions.c.id,
        dashboard_sessions.c.application_id,
        dashboard_sessions.c.user_id,
        dashboard_sessions.c.challenge,
    ).where(
        dashboard_sessions.c.id == session_id,
        dashboard_sessions.c.stage == "PASSWORD",
        dashboard_sessions.c.user_id.is_not(None),
        dashboard_sessions.c.expires_at > now,
    )
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    return PendingSession(row.id, row.application_id, row.user_id, row.challenge)


async def touch(conn: AsyncConnection, session_id: str, now: datetime, every_seconds: int) -> None:
    """Notes a page view at ``now``, unless one was noted less than ``every_seconds`` ago."""
    await conn.execute(
        update(dashboard_sessions)
        .where(
            dashboard_sessions.c.id == session_id,
            dashboard_sessions.c.last_seen_at <= now - timedelta(seconds=every_seconds),
        )
        .values(last_seen_at=now)
    )


async def set_challenge(conn: AsyncConnection, session_id: str, challenge: str | None) -> None:
    await conn.execute(
        update(dashboard_sessions).where(dashboard_sessions.c.id == session_id).values(challenge=challenge)
    )


async def delete_session(conn: AsyncConnection, session_id: str) -> None:
    await conn.execute(delete(dashboard_sessions).where(dashboard_sessions.c.id == session_id))


async def delete_sessions_of_user(conn: AsyncConnection, user_id: str) -> None:
    """Ends every session of the person ``user_id`` (a role change, disabling or removal:
    payorch.users calls it in the same transaction)."""
    await conn.execute(delete(dashboard_sessions).where(dashboard_sessions.c.user_id == user_id))


async def delete_expired(conn: AsyncConnection, now: datetime, idle_seconds: int) -> None:
    await conn.execute(
        delete(dashboard_sessions).where(
            or_(
                dashboard_sessions.c.expires_at <= now,
                dashboard_sessions.c.last_seen_at <= now - timedelta(seconds=idle_seconds),
            )
        )
    )
