"""All SQL of routing versions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.prepared import Prepared
from payorch.db.records import Row, column_values, record_of
from payorch.db.tables.routing import routing_versions as versions
from payorch.routing.records import RoutingVersion


def _version(row: Row) -> RoutingVersion:
    return record_of(RoutingVersion, row)


# Read by every checkout of an ``auto`` intent: built once, run on the driver (db/prepared.py).
_ACTIVE = Prepared(
    select(versions).where(
        versions.c.merchant_account_id == bindparam("merchant_account_id"), versions.c.active.is_(True)
    )
)


async def active(conn: AsyncConnection, merchant_account_id: str) -> RoutingVersion | None:
    row = await _ACTIVE.first(conn, {"merchant_account_id": merchant_account_id})
    return _version(row) if row is not None else None


async def get(conn: AsyncConnection, merchant_account_id: str, version: int) -> RoutingVersion | None:
    query = select(versions).where(
        versions.c.merchant_account_id == merchant_account_id, versions.c.version == version
    )
    row = (await conn.execute(query)).mappings().first()
    return _version(row) if row is not None else None


async def latest_number(conn: AsyncConnection, merchant_account_id: str) -> int:
    query = select(func.max(versions.c.version)).where(versions.c.merchant_account_id == merchant_account_id)
    return int((await conn.execute(query)).scalar_one_or_none() or 0)


async def insert_version(conn: AsyncConnection, version: RoutingVersion) -> None:
    await conn.execute(insert(versions), column_values(version))


async def make_active(conn: AsyncConnection, merchant_account_id: str, version: int, at: datetime) -> None:
    """``version`` becomes the merchant's only active one (the others first: the partial unique
    index admits one active row per merchant at any moment)."""
    mine = versions.c.merchant_account_id == merchant_account_id
    await conn.execute(update(versions).where(mine, versions.c.active.is_(True)).values(active=False))
    await conn.execute(
        update(versions).where(mine, versions.c.version == version).values(active=True, activated_at=at)
    )


async def page(
    conn: AsyncConnection, merchant_account_id: str, below: int | None, limit: int
) -> list[RoutingVersion]:
    """Newest first, keyset on the version number (the unique (merchant, version) index)."""
    query = select(versions).where(versions.c.merchant_account_id == merchant_account_id)
    if below is not None:
        query = query.where(versions.c.version < below)
    query = query.order_by(versions.c.version.desc()).limit(limit)
    return [_version(row) for row in (await conn.execute(query)).mappings()]
