"""All SQL of idempotency records. Claims rely on the primary key, never check-then-insert."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime

from sqlalchemy import Row, bindparam, delete, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.one_statement import Fragment
from payorch.db.prepared import Prepared
from payorch.db.records import column_values
from payorch.db.tables import idempotency_records as records
from payorch.idempotency.records import IdempotencyRecord, KeyState

IN_PROGRESS = "IN_PROGRESS"
COMPLETED = "COMPLETED"


# Statements built once, values as parameters (docs/performance-decisions.md, "Statements built once").
# Parameter names differ from the columns': an UPDATE reserves its columns' names for SET.
_PK = (
    records.c.application_id == bindparam("pk_application_id"),
    records.c.operation == bindparam("pk_operation"),
    records.c.key == bindparam("pk_key"),
)
_ROW_FIELDS = tuple(field.name for field in fields(KeyState))


def _pk(application_id: str, operation: str, key: str) -> dict[str, object]:
    return {"pk_application_id": application_id, "pk_operation": operation, "pk_key": key}


def _row(row: KeyState) -> dict[str, object]:
    return {f"row_{name}": value for name, value in column_values(row).items()}


def claim_row(
    *, fingerprint: str, now: datetime, locked_until: datetime, expires_at: datetime
) -> KeyState:
    """A fresh IN_PROGRESS claim (multi-phase operations)."""
    return KeyState(fingerprint, IN_PROGRESS, locked_until, None, None, now, expires_at)


def completed_row(
    *, fingerprint: str, now: datetime, expires_at: datetime, status: int, body: bytes
) -> KeyState:
    """A key stored with its answer (single-transaction operations)."""
    return KeyState(fingerprint, COMPLETED, now, status, body.decode(), now, expires_at)


def _record(row: Row[tuple[object, ...]]) -> IdempotencyRecord:
    m = row._mapping
    return IdempotencyRecord(
        application_id=m["application_id"],
        operation=m["operation"],
        key=m["key"],
        fingerprint=m["fingerprint"],
        state=m["state"],
        locked_until=m["locked_until"],
        response_status=m["response_status"],
        response_body=m["response_body"],
        created_at=m["created_at"],
        expires_at=m["expires_at"],
    )


_INSERT_IF_ABSENT = {
    name: Prepared(dialect.insert(records).on_conflict_do_nothing())
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}  # built once per dialect: the create hot path runs it on every keyed request


async def insert_if_absent(
    conn: AsyncConnection, application_id: str, operation: str, key: str, row: KeyState
) -> bool:
    """Insert the key with ``row``; False if the key exists. On PostgreSQL this waits for a
    concurrent transaction holding the same key to end, then reports the conflict."""
    values = {"application_id": application_id, "operation": operation, "key": key, **column_values(row)}
    return await _INSERT_IF_ABSENT[conn.dialect.name].rowcount(conn, values) == 1


async def get(
    conn: AsyncConnection, application_id: str, operation: str, key: str
) -> IdempotencyRecord | None:
    found = (await conn.execute(_GET, _pk(application_id, operation, key))).first()
    return None if found is None else _record(found)


_GET = select(records).where(*_PK)
_TAKE_OVER = (
    update(records)
    .where(*_PK, records.c.expires_at <= bindparam("now"))
    .values({name: bindparam(f"row_{name}") for name in _ROW_FIELDS})
)
_TAKE_OVER_OR_STALE_CLAIM = (
    update(records)
    .where(
        *_PK,
        or_(
            records.c.expires_at <= bindparam("now"),
            (records.c.state == IN_PROGRESS) & (records.c.locked_until <= bindparam("now")),
        ),
    )
    .values({name: bindparam(f"row_{name}") for name in _ROW_FIELDS})
)


async def take_over(
    conn: AsyncConnection,
    application_id: str,
    operation: str,
    key: str,
    row: KeyState,
    *,
    now: datetime,
    or_stale_claim: bool = False,
) -> bool:
    """Write ``row`` over a key whose TTL ran out (and, if asked, over an IN_PROGRESS claim
    whose holder died): compare-and-set, so of two racers only one takes it."""
    statement = _TAKE_OVER_OR_STALE_CLAIM if or_stale_claim else _TAKE_OVER
    parameters = {**_pk(application_id, operation, key), **_row(row), "now": now}
    result = await conn.execute(statement, parameters)
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
    parameters = {**_pk(application_id, operation, key), "now": now, "until": locked_until}
    result = await conn.execute(_TAKE_OVER_STALE_LOCK, parameters)
    return result.rowcount == 1


_TAKE_OVER_STALE_LOCK = (
    update(records)
    .where(*_PK, records.c.state == IN_PROGRESS, records.c.locked_until <= bindparam("now"))
    .values(locked_until=bindparam("until"))
)
_COMPLETE = Prepared(
    update(records)
    .where(*_PK, records.c.fingerprint == bindparam("expected_fingerprint"))
    .values(state=COMPLETED, response_status=bindparam("status"), response_body=bindparam("body"))
)
_DELETE_CLAIM = delete(records).where(
    *_PK, records.c.state == IN_PROGRESS, records.c.fingerprint == bindparam("expected_fingerprint")
)


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
    parameters = {**_pk(application_id, operation, key), "expected_fingerprint": fingerprint}
    await _COMPLETE.execute(conn, {**parameters, "status": status, "body": body.decode()})


async def delete_claim(
    conn: AsyncConnection, *, application_id: str, operation: str, key: str, fingerprint: str
) -> None:
    parameters = {**_pk(application_id, operation, key), "expected_fingerprint": fingerprint}
    await conn.execute(_DELETE_CLAIM, parameters)


async def purge_expired(conn: AsyncConnection, now: datetime, batch: int = 1000) -> int:
    doomed = (
        select(records.c.application_id, records.c.operation, records.c.key)
        .where(records.c.expires_at <= now, records.c.state == COMPLETED)
        .limit(batch)
    )
    rows = (await conn.execute(doomed)).all()
    for row in rows:
        await conn.execute(_PURGE, {**_pk(row.application_id, row.operation, row.key), "now": now})
    return len(rows)


_PURGE = delete(records).where(*_PK, records.c.expires_at <= bindparam("now"))


# PostgreSQL, one statement (payorch.db.one_statement): store the key with its answer when the
# fragment ``checked`` returned a row (every condition of the write held). ON CONFLICT DO NOTHING
# waits for a concurrent holder of the key, then writes nothing: no row returned, so the writes
# that require this one write nothing either, and the caller falls back to the full path (which
# replays or refuses). Named ``admitted``: the gate of the writes after it. Parameters:
# application_id and idem_* (completed_key_parameters).
COMPLETED_KEY_FRAGMENT = Fragment(
    "admitted",
    "INSERT INTO idempotency_records (application_id, operation, key, fingerprint, state,"
    " locked_until, response_status, response_body, created_at, expires_at)"
    " SELECT CAST(:application_id AS TEXT), CAST(:idem_operation AS TEXT),"
    " CAST(:idem_key AS TEXT), CAST(:idem_fingerprint AS TEXT), 'COMPLETED',"
    " CAST(:idem_locked_until AS TIMESTAMPTZ), CAST(:idem_status AS INTEGER),"
    " CAST(:idem_body AS TEXT), CAST(:idem_created_at AS TIMESTAMPTZ),"
    " CAST(:idem_expires_at AS TIMESTAMPTZ)"
    " WHERE EXISTS (SELECT 1 FROM checked)"
    " ON CONFLICT DO NOTHING RETURNING 1",
)


def completed_key_parameters(operation: str, key: str, row: KeyState) -> dict[str, object]:
    """The idem_* parameters of completed_key_fragment (``row``: a completed_row)."""
    return {
        "idem_operation": operation,
        "idem_key": key,
        "idem_fingerprint": row.fingerprint,
        "idem_locked_until": row.locked_until,
        "idem_created_at": row.created_at,
        "idem_status": row.response_status,
        "idem_body": row.response_body,
        "idem_expires_at": row.expires_at,
    }
