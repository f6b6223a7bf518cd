"""All SQL of API credentials."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Row, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import api_credentials, applications


async def find_by_prefix(conn: AsyncConnection, prefix: str) -> Row | None:  # type: ignore[type-arg]
    query = (
        select(
            api_credentials.c.id,
            api_credentials.c.application_id,
            api_credentials.c.secret_hash,
            api_credentials.c.revoked_at,
            applications.c.environment,
        )
        .join(applications, applications.c.id == api_credentials.c.application_id)
        .where(api_credentials.c.prefix == prefix)
    )
    return (await conn.execute(query)).first()


async def insert_credential(
    conn: AsyncConnection,
    *,
    credential_id: str,
    application_id: str,
    name: str | None,
    prefix: str,
    secret_hash: str,
    created_at: datetime,
) -> None:
    await conn.execute(
        insert(api_credentials).values(
            id=credential_id,
            application_id=application_id,
            name=name,
            prefix=prefix,
            secret_hash=secret_hash,
            created_at=created_at,
        )
    )


async def list_credentials(conn: AsyncConnection, application_id: str) -> list[Row]:  # type: ignore[type-arg]
    query = (
        select(api_credentials)
        .where(api_credentials.c.application_id == application_id)
        .order_by(api_credentials.c.id.desc())
    )
    return list((await conn.execute(query)).all())


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


async def lock_application(conn: AsyncConnection, application_id: str) -> None:
    """Serialize credential changes of one application (PostgreSQL; SQLite serializes anyway)."""
    await conn.execute(
        select(applications.c.id).where(applications.c.id == application_id).with_for_update()
    )


async def get_credential(conn: AsyncConnection, application_id: str, credential_id: str) -> Row | None:  # type: ignore[type-arg]
    query = select(api_credentials).where(
        api_credentials.c.id == credential_id,
        api_credentials.c.application_id == application_id,
    )
    return (await conn.execute(query)).first()


async def count_active(conn: AsyncConnection, application_id: str) -> int:
    query = select(func.count()).where(
        api_credentials.c.application_id == application_id,
        api_credentials.c.revoked_at.is_(None),
    )
    return int((await conn.execute(query)).scalar_one())
