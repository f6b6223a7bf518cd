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


async def merchant_belongs_to(conn: AsyncConnection, merchant_id: str, application_id: str) -> bool:
    query = select(merchant_accounts.c.id).where(
        merchant_accounts.c.id == merchant_id,
        merchant_accounts.c.application_id == application_id,
    )
    return (await conn.execute(query)).first() is not None


async def count_applications(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(applications))).scalar_one())
