"""SQL shared by both simulated providers: fault modes, the merchant name shown on pages, and
reading one owner's row.

Statements are built once, with bind parameters for the values (docs/performance-decisions.md,
"Statements built once"): building one per call cost more CPU than running it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, Table, bindparam, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.prepared import Prepared
from payorch.db.records import Record, record_of
from payorch.db.tables import merchant_accounts
from payorch.db.tables.simulator import simulator_faults as faults
from payorch.simulator.credentials import PUBLIC_OWNER

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_FAULT_MODE = Prepared(
    select(faults.c.mode).where(
        faults.c.owner == bindparam("owner"), faults.c.provider == bindparam("provider")
    )
)


async def fault_mode(conn: AsyncConnection, owner: str, provider: str) -> str:
    row = await _FAULT_MODE.first(conn, {"owner": owner, "provider": provider})
    return str(row["mode"]) if row is not None else "ok"


_FAULT_MODES = select(faults.c.provider, faults.c.mode).where(faults.c.owner == bindparam("owner"))


async def fault_modes(conn: AsyncConnection, owner: str) -> dict[str, str]:
    rows = await conn.execute(_FAULT_MODES, {"owner": owner})
    return {row.provider: row.mode for row in rows}


# An update's own bind parameters must not bear its table's column names (those are the SET
# clause's), hence the b_ prefix.
_UPDATE_FAULT_MODE = (
    update(faults)
    .where(faults.c.owner == bindparam("b_owner"), faults.c.provider == bindparam("b_provider"))
    .values(mode=bindparam("b_mode"), updated_at=bindparam("b_updated_at"))
)
_INSERT_FAULT_MODE = insert(faults)


async def set_fault_mode(
    conn: AsyncConnection, owner: str, provider: str, mode: str, now: datetime
) -> None:
    changed = await conn.execute(
        _UPDATE_FAULT_MODE,
        {"b_owner": owner, "b_provider": provider, "b_mode": mode, "b_updated_at": now},
    )
    if changed.rowcount == 0:
        await conn.execute(
            _INSERT_FAULT_MODE,
            {"owner": owner, "provider": provider, "mode": mode, "updated_at": now},
        )


_MERCHANT_NAME = Prepared(
    select(merchant_accounts.c.name)
    .where(merchant_accounts.c.application_id == bindparam("owner"))
    .order_by(merchant_accounts.c.created_at, merchant_accounts.c.id)  # ids follow creation: one first
    .limit(1)
)


async def merchant_name(conn: AsyncConnection, owner: str) -> str:
    """The shop a buyer's page names: the owner's first merchant account's, else "Sandbox shop"."""
    # A read across domains (applications own merchant_accounts): one column for display.
    row = await _MERCHANT_NAME.first(conn, {"owner": owner})
    return str(row["name"]) if row is not None else "Sandbox shop"


@cache
def _owned_statement(
    table: Table, key: str, *, by_owner: bool, for_update: bool
) -> Prepared:
    """Built once per table, key column and variant."""
    query = select(table).where(table.c[key] == bindparam("key"))
    if by_owner:
        query = query.where(table.c.owner == bindparam("owner"))
    if for_update:
        query = query.with_for_update()
    return Prepared(query)


async def owned(
    conn: AsyncConnection,
    record_type: type[Record],
    table: Table,
    key: str,
    value: object,
    *,
    owner: str | None,
    for_update: bool,
) -> Record | None:
    """The row of ``table`` whose column ``key`` is ``value``, if ``owner``'s (None: anyone's,
    only for the buyer's pages, which carry no credentials); locked for the transaction when
    ``for_update``."""
    query = _owned_statement(table, key, by_owner=owner is not None, for_update=for_update)
    params = {"key": value} if owner is None else {"key": value, "owner": owner}
    row = await query.first(conn, params)
    return record_of(record_type, row) if row is not None else None


async def records(conn: AsyncConnection, record_type: type[Record], query: Select[Any]) -> list[Record]:
    """Every row ``query`` selects, as ``record_type`` (its fields are the rows' columns)."""
    return [record_of(record_type, row) for row in (await conn.execute(query)).mappings()]


async def insert_record(conn: AsyncConnection, table: Table, record: DataclassInstance) -> None:
    """A record whose fields are ``table``'s columns, as a new row."""
    await conn.execute(insert(table).values(**asdict(record)))


async def save_record(
    conn: AsyncConnection, table: Table, record: DataclassInstance, key: str = "id"
) -> None:
    """Every column of the row whose ``key`` is the record's, as the record says."""
    values = asdict(record)
    await conn.execute(update(table).where(table.c[key] == values.pop(key)).values(**values))


async def delete_made_before(conn: AsyncConnection, table: Table, owner: str, before: datetime) -> int:
    """``owner``'s rows of ``table`` created before ``before`` (the public purge); how many went."""
    gone = await conn.execute(delete(table).where(table.c.owner == owner, table.c.created_at < before))
    return gone.rowcount


def public_purge(*tables: Table) -> Callable[[AsyncConnection, datetime, int], Awaitable[int]]:
    """The public owner's purge (``SimulatedProvider.purge_public``) of a provider whose objects
    are the rows of ``tables``: those made before ``before``, table by table; how many went."""

    async def purge(conn: AsyncConnection, before: datetime, limit: int) -> int:
        return sum([await delete_made_before(conn, table, PUBLIC_OWNER, before) for table in tables])

    return purge
