"""All SQL of the dashboard's sessions (records.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.dashboard.records import ActiveSession, DashboardSession
from payorch.db.records import column_values
from payorch.db.tables import api_credentials, applications
from payorch.db.tables.dashboard import dashboard_sessions

# The one read of other domains' tables here, joined because it is the point: a session is valid
# only while the key it signed in with is not revoked (revoking the key ends its sessions at once,
# with nothing to clean up), and the application's environment comes in the same round trip.
_ACTIVE = (
    select(
        dashboard_sessions.c.id,
        dashboard_sessions.c.application_id,
        dashboard_sessions.c.credential_id,
        applications.c.environment,
    )
    .join(api_credentials, api_credentials.c.id == dashboard_sessions.c.credential_id)
    .join(applications, applications.c.id == dashboard_sessions.c.application_id)
    .where(api_credentials.c.revoked_at.is_(None))
)


async def insert_session(conn: AsyncConnection, session: DashboardSession) -> None:
    await conn.execute(insert(dashboard_sessions).values(column_values(session)))


async def find_active(conn: AsyncConnection, session_id: str, now: datetime) -> ActiveSession | None:
    # A key past its expiry ends its sessions as a revoked one does.
    key_valid = or_(api_credentials.c.expires_at.is_(None), api_credentials.c.expires_at > now)
    query = _ACTIVE.where(
        dashboard_sessions.c.id == session_id, dashboard_sessions.c.expires_at > now, key_valid
    )
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    return ActiveSession(row.id, row.application_id, row.credential_id, row.environment)


async def delete_session(conn: AsyncConnection, session_id: str) -> None:
    await conn.execute(delete(dashboard_sessions).where(dashboard_sessions.c.id == session_id))


async def delete_expired(conn: AsyncConnection, now: datetime) -> None:
    await conn.execute(delete(dashboard_sessions).where(dashboard_sessions.c.expires_at <= now))


async def delete_sessions_of_user(conn: AsyncConnection, user_id: str) -> None:
    """End a person's sessions at once (payorch.users: a role change, disabling, removal)."""
    await conn.execute(delete(dashboard_sessions).where(dashboard_sessions.c.user_id == user_id))
