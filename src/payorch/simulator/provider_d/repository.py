"""All SQL of simulated provider D's sessions (tables.py). In the caller's transaction."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import record_of
from payorch.simulator import repository as shared
from payorch.simulator.provider_d.records import SimDSession
from payorch.simulator.provider_d.tables import simulator_d_sessions as sessions


async def insert_session(conn: AsyncConnection, session: SimDSession) -> None:
    await conn.execute(insert(sessions).values(**asdict(session)))


async def save(conn: AsyncConnection, session: SimDSession) -> None:
    values = asdict(session)
    await conn.execute(update(sessions).where(sessions.c.id == values.pop("id")).values(**values))


async def session_of(
    conn: AsyncConnection, session_id: str, *, owner: str | None, for_update: bool = False
) -> SimDSession | None:
    """``owner``'s session (None: anyone's, for the buyer's page, which carries no credentials)."""
    return await shared.owned(
        conn, SimDSession, sessions, "id", session_id, owner=owner, for_update=for_update
    )


async def paid_by(conn: AsyncConnection, psp: str, owner: str) -> SimDSession | None:
    """The session whose authorised payment is ``psp``, locked for the change."""
    return await shared.owned(conn, SimDSession, sessions, "psp", psp, owner=owner, for_update=True)


async def sessions_for(conn: AsyncConnection, owner: str, intent: str) -> list[SimDSession]:
    """``owner``'s sessions made for a payment intent, newest first."""
    query = select(sessions).where(sessions.c.owner == owner, sessions.c.intent == intent)
    rows = await conn.execute(query.order_by(sessions.c.created_at.desc()))
    return [record_of(SimDSession, row) for row in rows.mappings()]


async def holds_ending(
    conn: AsyncConnection, before: datetime, limit: int, owner: str | None = None
) -> list[SimDSession]:
    """Held payments whose authorisation ends before ``before`` (``owner``'s, or anyone's)."""
    query = select(sessions).where(sessions.c.payment == "authorised", sessions.c.hold_ends_at <= before)
    if owner is not None:
        query = query.where(sessions.c.owner == owner)
    rows = await conn.execute(query.order_by(sessions.c.hold_ends_at).limit(limit).with_for_update())
    return [record_of(SimDSession, row) for row in rows.mappings()]


async def delete_older_than(conn: AsyncConnection, owner: str, before: datetime) -> int:
    gone = await conn.execute(
        delete(sessions).where(sessions.c.owner == owner, sessions.c.created_at < before)
    )
    return gone.rowcount
