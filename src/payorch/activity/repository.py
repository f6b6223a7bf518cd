"""SQL of the activity domain: append to an application's chain. There is no update or delete of
an entry; retention removes whole old entries in order (payorch.activity.retention)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.chain import GENESIS
from payorch.activity.records import Entry
from payorch.db.tables.activity import activity_heads, activity_log


async def lock_head(conn: AsyncConnection, application_id: str, now: datetime) -> tuple[int, str]:
    """The application's last seq and hash, its head row locked until the transaction ends (on
    SQLite the writer's lock already orders the transactions)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    await conn.execute(
        dialect.insert(activity_heads)
        .values(application_id=application_id, seq=0, hash=GENESIS, updated_at=now)
        .on_conflict_do_nothing()
    )
    row = (
        await conn.execute(
            select(activity_heads.c.seq, activity_heads.c.hash)
            .where(activity_heads.c.application_id == application_id)
            .with_for_update()
        )
    ).one()
    return int(row.seq), str(row.hash)


async def append(conn: AsyncConnection, entry: Entry) -> None:
    await conn.execute(
        insert(activity_log).values(
            id=entry.id,
            application_id=entry.application_id,
            seq=entry.seq,
            at=entry.at,
            actor_type=entry.actor.type,
            actor_id=entry.actor.id,
            actor_email=entry.actor.email,
            action=entry.action,
            resource_type=entry.resource_type,
            resource_id=entry.resource_id,
            outcome=entry.outcome,
            origin_ip=entry.origin.ip,
            origin_user_agent=entry.origin.user_agent,
            request_id=entry.origin.request_id,
            changes=entry.changes,
            previous_hash=entry.previous_hash,
            hash=entry.hash,
        )
    )
    await conn.execute(
        update(activity_heads)
        .where(activity_heads.c.application_id == entry.application_id)
        .values(seq=entry.seq, hash=entry.hash, updated_at=entry.at)
    )
