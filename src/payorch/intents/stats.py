"""Counts of an application's payment intents over a recent window (the dashboard's overview).

The window is an id range (ids are time-ordered, payorch.ids), so each count reads only that
window's rows of the application's (application_id, id) or (application_id, status, id) index,
however long the history.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, func, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import payment_intents as intents
from payorch.ids import lowest_id


async def status_counts(conn: AsyncConnection, application_id: str, since: datetime) -> dict[str, int]:
    """Intents created since ``since``, by status."""
    query = (
        select(intents.c.status, func.count())
        .where(intents.c.application_id == application_id, intents.c.id >= _lowest(since))
        .group_by(intents.c.status)
    )
    return {status: count for status, count in (await conn.execute(query)).all()}


def _lowest(since: datetime) -> str:
    return lowest_id("payi", int(since.timestamp() * 1000))


def _hour(conn: AsyncConnection) -> ColumnElement[str]:
    """The UTC hour of ``created_at`` as text "YYYY-MM-DD HH" on either database."""
    if conn.dialect.name == "postgresql":
        return func.to_char(func.timezone(literal("UTC"), intents.c.created_at), "YYYY-MM-DD HH24")
    return func.substr(intents.c.created_at, 1, 13)  # SQLite stores "YYYY-MM-DD HH:MM:SS..." in UTC


async def hourly_status_counts(
    conn: AsyncConnection, application_id: str, since: datetime
) -> list[tuple[str, str, int]]:
    """(UTC hour "YYYY-MM-DD HH", status, count) of the intents created since ``since``."""
    hour = _hour(conn).label("hour")
    query = (
        select(hour, intents.c.status, func.count())
        .where(intents.c.application_id == application_id, intents.c.id >= _lowest(since))
        .group_by(hour, intents.c.status)
    )
    return [(h, status, count) for h, status, count in (await conn.execute(query)).all()]
