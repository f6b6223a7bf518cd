"""All SQL of connectors."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import connectors


class DuplicateConnector(Exception):
    """The (merchant, provider) pair already has a configuration."""


async def insert_connector(conn: AsyncConnection, **values: Any) -> None:
    # A savepoint, so the unique violation leaves the surrounding transaction usable (PostgreSQL).
    try:
        async with conn.begin_nested():
            await conn.execute(insert(connectors).values(**values))
    except IntegrityError as exc:
        raise DuplicateConnector() from exc


async def for_merchant(conn: AsyncConnection, merchant_account_id: str) -> list[Row]:  # type: ignore[type-arg]
    query = (
        select(connectors)
        .where(connectors.c.merchant_account_id == merchant_account_id)
        .order_by(connectors.c.priority, connectors.c.created_at, connectors.c.id)
    )
    return list((await conn.execute(query)).all())


async def get(
    conn: AsyncConnection, application_id: str, merchant_account_id: str, connector_id: str
) -> Row | None:  # type: ignore[type-arg]
    query = select(connectors).where(
        connectors.c.id == connector_id,
        connectors.c.application_id == application_id,
        connectors.c.merchant_account_id == merchant_account_id,
    )
    return (await conn.execute(query)).first()


async def get_any(conn: AsyncConnection, connector_id: str) -> Row | None:  # type: ignore[type-arg]
    """By id alone: for provider notifications, which carry no API key."""
    return (await conn.execute(select(connectors).where(connectors.c.id == connector_id))).first()


async def update_connector(conn: AsyncConnection, connector_id: str, **values: Any) -> None:
    await conn.execute(update(connectors).where(connectors.c.id == connector_id).values(**values))


async def application_of_merchant(conn: AsyncConnection, merchant_account_id: str) -> str | None:
    from payorch.db.tables import merchant_accounts

    query = select(merchant_accounts.c.application_id).where(
        merchant_accounts.c.id == merchant_account_id
    )
    return (await conn.execute(query)).scalar_one_or_none()


async def enabled_provider(conn: AsyncConnection, merchant_account_id: str, provider: str) -> bool:
    query = select(connectors.c.id).where(
        connectors.c.merchant_account_id == merchant_account_id,
        connectors.c.provider == provider,
        connectors.c.enabled.is_(True),
    )
    return (await conn.execute(query)).first() is not None
