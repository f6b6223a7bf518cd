"""All SQL of API credentials (records.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.records import ApiCredential, KeyHolder
from payorch.db.tables import api_credentials, applications

_COLUMNS = tuple(api_credentials.c.keys())  # the record's fields have the columns' names


def _credential(row: RowMapping) -> ApiCredential:
    return ApiCredential(**{name: row[name] for name in _COLUMNS})


# The one read of another domain's table here (the application's environment): joined because
# authentication reads both on every cache miss, and one round trip is the point.
_FIND_BY_PREFIX = select(
    api_credentials.c.id,
    api_credentials.c.application_id,
    api_credentials.c.secret_hash,
    api_credentials.c.revoked_at,
    applications.c.environment,
).join(applications, applications.c.id == api_credentials.c.application_id)


async def find_by_prefix(conn: AsyncConnection, prefix: str) -> KeyHolder | None:
    query = _FIND_BY_PREFIX.where(api_credentials.c.prefix == prefix)
    row = (await conn.execute(query)).first()
    if row is None:
        return None
    return KeyHolder(
        credential_id=row.id,
        application_id=row.application_id,
        environment=row.environment,
        secret_hash=row.secret_hash,
        revoked=row.revoked_at is not None,
    )


async def insert_credential(conn: AsyncConnection, credential: ApiCredential) -> None:
    await conn.execute(
        insert(api_credentials).values(
            {name: getattr(credential, name) for name in _COLUMNS}
        )
    )


async def list_credentials(conn: AsyncConnection, application_id: str) -> list[ApiCredential]:
    query = (
        select(api_credentials)
        .where(api_credentials.c.application_id == application_id)
        .order_by(api_credentials.c.id.desc())
    )
    return [_credential(row) for row in (await conn.execute(query)).mappings()]


async def revoke(
    conn: AsyncConnection, application_id: str, credential_id: str, at: datetime
) -> str | None:
    """Mark revoked; returns the key's prefix, or None if no such key in this application."""
    result = await conn.execute(
        update(api_credentials)
        .where(
            api_credentials.c.id == credential_id,
            api_credentials.c.application_id == application_id,
        )
        .values(revoked_at=at)
        .returning(api_credentials.c.prefix)
    )
    prefix: str | None = result.scalar_one_or_none()
    return prefix


async def get_credential(
    conn: AsyncConnection, application_id: str | None, credential_id: str
) -> ApiCredential | None:
    """The application's key; ``application_id`` None: whichever application holds it (the
    operator's command line)."""
    query = select(api_credentials).where(api_credentials.c.id == credential_id)
    if application_id is not None:
        query = query.where(api_credentials.c.application_id == application_id)
    row = (await conn.execute(query)).mappings().first()
    return _credential(row) if row is not None else None


async def count_active(conn: AsyncConnection, application_id: str) -> int:
    query = select(func.count()).where(
        api_credentials.c.application_id == application_id,
        api_credentials.c.revoked_at.is_(None),
    )
    return int((await conn.execute(query)).scalar_one())
