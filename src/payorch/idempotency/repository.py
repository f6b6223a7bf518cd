"""All SQL of idempotency records. Claims rely on the primary key, never check-then-insert."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import idempotency_records as records

IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"


def _pk(application_id: str, operation: str, key: str) -> list:  # type: ignore[type-arg]
    return [
        records.c.application_id == application_id,
        records.c.operation == operation,
        records.c.key == key,
    ]


_INSERT_COMPLETED = {
    name: dialect.insert(records).on_conflict_do_nothing()
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}  # built once per dialect: the create hot path runs it on every keyed request


async def insert_completed(
    conn: AsyncConnection,
    *,
    application_id: str,
    operation: str,
    key: str,
    fingerprint: str,
    now: datetime,
    expires_at: datetime,
    status: int,
    body: bytes,
) -> bool:
    """Insert a COMPLETED row; False if the key exists. On PostgreSQL this waits for a
    concurrent transaction holding the same key to end, then reports the conflict."""
    result = await conn.execute(
        _INSERT_COMPLETED[conn.dialect.name],
        {
            "application_id": application_id,
            "operation": operation,
            "key": key,
            "fingerprint": fingerprint,
            "state": COMPLETED,
            "locked_until": now,
            "response_status": status,
            "response_body": body.decode(),
            "created_at": now,
            "expires_at": expires_at,
        },
    )
    return result.rowcount == 1


async def take_over_completed(
    conn: AsyncConnection,
    *,
    application_id: str,
    operation: str,
    key: str,
    fingerprint: str,
    now: datetime,
    expires_at: datetime,
    status: int,
    body: bytes,
) -> bool:
    """Store our answer over an expired row, or over a claim whose holder died."""
    result = await conn.execute(
        update(records)
        .where(
            *_pk(application_id, operation, key),
            or_(
                records.c.expires_at <= now,
                (records.c.state == IN_PROGRESS) & (records.c.locked_until <= now),
            ),
        )
        .values(
            fingerprint=fingerprint,
            state=COMPLETED,
            locked_until=now,
            response_status=status,
            response_body=body.decode(),
            created_at=now,
            expires_at=expires_at,
        )
    )
    return result.rowcount == 1


async def insert_claim(
    conn: AsyncConnection,
    *,
    application_id: str,
    operation: str,
    key: str,
    fingerprint: str,
    now: datetime,
    locked_until: datetime,
    expires_at: datetime,
) -> bool:
    """Insert an IN_PROGRESS row; False if a row with this key already exists."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(records)
        .values(
            application_id=application_id,
            operation=operation,
            key=key,
            fingerprint=fingerprint,
            state=IN_PROGRESS,
            locked_until=locked_until,
            created_at=now,
            expires_at=expires_at,
        )
        .on_conflict_do_nothing()
    )
    result = await conn.execute(statement)
    return result.rowcount == 1


async def get(conn: AsyncConnection, application_id: str, operation: str, key: str) -> Row | None:  # type: ignore[type-arg]
    return (await conn.execute(select(records).where(*_pk(application_id, operation, key)))).first()


async def take_over_expired(
    conn: AsyncConnection,
    *,
    application_id: str,
    operation: str,
    key: str,
    fingerprint: str,
    now: datetime,
    locked_until: datetime,
    expires_at: datetime,
) -> bool:
    """Reuse a row whose TTL ran out, as if it were new (compare-and-set on expires_at)."""
    result = await conn.execute(
        update(records)
        .where(*_pk(application_id, operation, key), records.c.expires_at <= now)
        .values(
            fingerprint=fingerprint,
            state=IN_PROGRESS,
            locked_until=locked_until,
            response_status=None,
            response_body=None,
            created_at=now,
            expires_at=expires_at,
        )
    )
    return result.rowcount == 1


async def take_over_stale_lock(
    conn: AsyncConnection,
    *,
    application_id: str,
    operation: str,
    key: str,
    now: datetime,
    locked_until: datetime,
) -> bool:
    """Re-lease an IN_PROGRESS row whose holder died (its lease ended)."""
    result = await conn.execute(
        update(records)
        .where(
            *_pk(application_id, operation, key),
            records.c.state == IN_PROGRESS,
            records.c.locked_until <= now,
        )
        .values(locked_until=locked_until)
    )
    return result.rowcount == 1


async def complete(
    conn: AsyncConnection,
    *,
    application_id: str,
    operation: str,
    key: str,
    fingerprint: str,
    status: int,
    body: bytes,
) -> None:
    await conn.execute(
        update(records)
        .where(*_pk(application_id, operation, key), records.c.fingerprint == fingerprint)
        .values(state=COMPLETED, response_status=status, response_body=body.decode())
    )


async def delete_claim(
    conn: AsyncConnection, *, application_id: str, operation: str, key: str, fingerprint: str
) -> None:
    await conn.execute(
        delete(records).where(
            *_pk(application_id, operation, key),
            records.c.state == IN_PROGRESS,
            records.c.fingerprint == fingerprint,
        )
    )


async def purge_expired(conn: AsyncConnection, now: datetime, batch: int = 1000) -> int:
    doomed = (
        select(records.c.application_id, records.c.operation, records.c.key)
        .where(records.c.expires_at <= now, records.c.state == COMPLETED)
        .limit(batch)
    )
    rows = (await conn.execute(doomed)).all()
    for row in rows:
        await conn.execute(
            delete(records).where(
                *_pk(row.application_id, row.operation, row.key), records.c.expires_at <= now
            )
        )
    return len(rows)
