"""All SQL of API credentials (records.py).

Every statement is built once, at import, with bind parameters for what varies: building one
per call cost more CPU than running it (docs/performance-decisions.md, "Statements built once").
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.records import ApiCredential, KeyHolder
from payorch.db.tables import api_credentials, applications

_COLUMNS = tuple(api_credentials.c.keys())  # the record's fields have the columns' names


def _credential(row: RowMapping) -> ApiCredential:
    return ApiCredential(**{name: row[name] for name in _COLUMNS})


# The one read of another domain's table here (the application's environment): joined because
# authentication reads both on every cache miss, and one round trip is the point.
_FIND_BY_PREFIX = (
    select(
        api_credentials.c.id,
        api_credentials.c.application_id,
        api_credentials.c.secret_hash,
        api_credentials.c.revoked_at,
        api_credentials.c.scopes,
        api_credentials.c.expires_at,
        api_credentials.c.last_used_at,
        applications.c.environment,
    )
    .join(applications, applications.c.id == api_credentials.c.application_id)
    .where(api_credentials.c.prefix == bindparam("prefix"))
)


async def find_by_prefix(conn: AsyncConnection, prefix: str) -> KeyHolder | None:
    row = (await conn.execute(_FIND_BY_PREFIX, {"prefix": prefix})).first()
    if row is None:
        return None
    return KeyHolder(
        credential_id=row.id,
        application_id=row.application_id,
        environment=row.environment,
        secret_hash=row.secret_hash,
        revoked=row.revoked_at is not None,
        scopes=frozenset(row.scopes) if row.scopes is not None else None,
        expires_at=row.expires_at,
        last_used_at=row.last_used_at,
    )


_INSERT = insert(api_credentials)


async def insert_credential(conn: AsyncConnection, credential: ApiCredential) -> None:
    await conn.execute(_INSERT, {name: getattr(credential, name) for name in _COLUMNS})


_LIST = (
    select(api_credentials)
    .where(api_credentials.c.application_id == bindparam("application_id"))
    .order_by(api_credentials.c.id.desc())
    .limit(bindparam("limit"))
)
_LIST_BEFORE = _LIST.where(api_credentials.c.id < bindparam("before"))


async def list_credentials(
    conn: AsyncConnection, application_id: str, *, before: str | None, limit: int
) -> list[ApiCredential]:
    """Newest first (ids are time-ordered), keyset on the id: up to ``limit`` keys older than
    the key ``before`` (None: from the newest)."""
    params: dict[str, object] = {"application_id": application_id, "limit": limit}
    if before is None:
        result = await conn.execute(_LIST, params)
    else:
        result = await conn.execute(_LIST_BEFORE, {**params, "before": before})
    return [_credential(row) for row in result.mappings()]


# No bind parameter of the update is named after a column: SQLAlchemy keeps those names for
# the SET clause.
_REVOKE = (
    update(api_credentials)
    .where(
        api_credentials.c.id == bindparam("credential_id"),
        api_credentials.c.application_id == bindparam("owner_id"),
    )
    .values(revoked_at=bindparam("at"))
    .returning(api_credentials.c.prefix)
)


async def revoke(conn: AsyncConnection, application_id: str, credential_id: str, at: datetime) -> str | None:
    """Mark revoked; returns the key's prefix, or None if no such key in this application."""
    params = {"credential_id": credential_id, "owner_id": application_id, "at": at}
    result = await conn.execute(_REVOKE, params)
    prefix: str | None = result.scalar_one_or_none()
    return prefix


# At most once a minute per key: a process that saw the key used writes only when the stored
# time is older than ``before`` (another process may have written it meanwhile).
_TOUCH = (
    update(api_credentials)
    .where(
        api_credentials.c.id == bindparam("credential_id"),
        (api_credentials.c.last_used_at.is_(None)) | (api_credentials.c.last_used_at < bindparam("before")),
    )
    .values(last_used_at=bindparam("at"))
)


async def touch(conn: AsyncConnection, credential_id: str, at: datetime, before: datetime) -> None:
    """Set the key's last use to ``at`` unless it is already at ``before`` or later."""
    await conn.execute(_TOUCH, {"credential_id": credential_id, "at": at, "before": before})


_GET_ANY_CREDENTIAL = select(api_credentials).where(api_credentials.c.id == bindparam("credential_id"))
_GET_CREDENTIAL = _GET_ANY_CREDENTIAL.where(api_credentials.c.application_id == bindparam("application_id"))


async def get_credential(
    conn: AsyncConnection, application_id: str | None, credential_id: str
) -> ApiCredential | None:
    """The application's key; ``application_id`` None: whichever application holds it (the
    operator's command line)."""
    if application_id is None:
        result = await conn.execute(_GET_ANY_CREDENTIAL, {"credential_id": credential_id})
    else:
        params = {"credential_id": credential_id, "application_id": application_id}
        result = await conn.execute(_GET_CREDENTIAL, params)
    row = result.mappings().first()
    return _credential(row) if row is not None else None


_COUNT_ACTIVE = select(func.count()).where(
    api_credentials.c.application_id == bindparam("application_id"),
    api_credentials.c.revoked_at.is_(None),
)


async def count_active(conn: AsyncConnection, application_id: str) -> int:
    return int((await conn.execute(_COUNT_ACTIVE, {"application_id": application_id})).scalar_one())
