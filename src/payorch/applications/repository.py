"""All SQL of applications and merchant accounts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import applications, merchant_accounts


async def insert_application(
    conn: AsyncConnection, *, application_id: str, name: str, environment: str, at: datetime
) -> None:
    await conn.execute(
        insert(applications).values(
            id=application_id, name=name, environment=environment, created_at=at
        )
    )


async def insert_merchant(
    conn: AsyncConnection, *, merchant_id: str, application_id: str, name: str, at: datetime
) -> None:
    await conn.execute(
        insert(merchant_accounts).values(
            id=merchant_id, application_id=application_id, name=name, created_at=at
        )
    )


# A merchant never changes application and is never deleted, so a positive answer can be kept.
_KNOWN_MERCHANTS: set[tuple[str, str]] = set()
_KNOWN_MERCHANTS_MAX = 100_000


async def merchant_belongs_to(conn: AsyncConnection, merchant_id: str, application_id: str) -> bool:
    if (merchant_id, application_id) in _KNOWN_MERCHANTS:
        return True
    query = select(merchant_accounts.c.id).where(
        merchant_accounts.c.id == merchant_id,
        merchant_accounts.c.application_id == application_id,
    )
    found = (await conn.execute(query)).first() is not None
    if found:
        if len(_KNOWN_MERCHANTS) >= _KNOWN_MERCHANTS_MAX:
            _KNOWN_MERCHANTS.clear()
        _KNOWN_MERCHANTS.add((merchant_id, application_id))
    return found


async def count_applications(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(applications))).scalar_one())
