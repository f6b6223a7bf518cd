"""SQL shared by both simulated providers: fault modes, the merchant name shown on pages, and
reading one owner's row."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, Table, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import Record, record_of
from payorch.db.tables import merchant_accounts
from payorch.db.tables.simulator import simulator_faults as faults


async def fault_mode(conn: AsyncConnection, owner: str, provider: str) -> str:
    row = (
        await conn.execute(
            select(faults.c.mode).where(faults.c.owner == owner, faults.c.provider == provider)
        )
    ).first()
    return row.mode if row is not None else "ok"


async def fault_modes(conn: AsyncConnection, owner: str) -> dict[str, str]:
    rows = await conn.execute(
        select(faults.c.provider, faults.c.mode).where(faults.c.owner == owner)
    )
    return {row.provider: row.mode for row in rows}


async def set_fault_mode(
    conn: AsyncConnection, owner: str, provider: str, mode: str, now: datetime
) -> None:
    changed = await conn.execute(
        update(faults)
        .where(faults.c.owner == owner, faults.c.provider == provider)
        .values(mode=mode, updated_at=now)
    )
    if changed.rowcount == 0:
        await conn.execute(
            insert(faults).values(owner=owner, provider=provider, mode=mode, updated_at=now)
        )


async def merchant_name(conn: AsyncConnection, owner: str) -> str | None:
    """The owner's first merchant account's name, for the pages' header."""
    # A read across domains (applications own merchant_accounts): one column for display.
    row = (
        await conn.execute(
            select(merchant_accounts.c.name)
            .where(merchant_accounts.c.application_id == owner)
            .order_by(merchant_accounts.c.created_at)
            .limit(1)
        )
    ).first()
    return row.name if row is not None else None


async def owned(
    conn: AsyncConnection,
    record_type: type[Record],
    table: Table,
    key: ColumnElement[bool],
    *,
    owner: str | None,
    for_update: bool,
) -> Record | None:
    """The row of ``table`` matching ``key``, if ``owner``'s (None: anyone's, only for the buyer's
    pages, which carry no credentials); locked for the transaction when ``for_update``."""
    query = select(table).where(key)
    if owner is not None:
        query = query.where(table.c.owner == owner)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return record_of(record_type, row) if row is not None else None
