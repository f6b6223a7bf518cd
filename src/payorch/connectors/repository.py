"""All SQL of connectors.

The statements run per request are built once, at import, with bind parameters for what
varies: building one per call cost more CPU than running it (docs/performance.md, "Statements
built once"). update_connector's stays built per call: its SET clause depends on the settings
given (16 shapes), and it runs only when a merchant changes a configuration.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, delete, exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.connectors.records import Connector
from payorch.db.prepared import Prepared
from payorch.db.records import Row as RowData
from payorch.db.records import column_values, given_values, record_of
from payorch.db.tables.providers import checkouts, connectors
from payorch.providers.base import Mode


class DuplicateConnector(Exception):
    """The (merchant, provider) pair already has a configuration."""


# The column `credentials` holds them encrypted; the record's field name says so.
_RENAMED = {"encrypted_credentials": "credentials"}


def _connector(row: RowData) -> Connector:
    return record_of(Connector, row, renamed=_RENAMED, mode=Mode(str(row["mode"])))


_INSERT = insert(connectors)  # executed with the record's column values


async def insert_connector(conn: AsyncConnection, connector: Connector) -> None:
    # A savepoint, so the unique violation leaves the surrounding transaction usable (PostgreSQL).
    try:
        async with conn.begin_nested():
            await conn.execute(_INSERT, column_values(connector, renamed=_RENAMED))
    except IntegrityError as exc:
        raise DuplicateConnector() from exc


_FOR_MERCHANT = Prepared(
    select(connectors).where(connectors.c.merchant_account_id == bindparam("merchant_account_id"))
)


async def for_merchant(conn: AsyncConnection, merchant_account_id: str) -> list[Connector]:
    """In no particular order (payorch.routing.order has the priority order)."""
    rows = await _FOR_MERCHANT.all(conn, {"merchant_account_id": merchant_account_id})
    return [_connector(row) for row in rows]


_GET = select(connectors).where(
    connectors.c.id == bindparam("connector_id"),
    connectors.c.application_id == bindparam("application_id"),
    connectors.c.merchant_account_id == bindparam("merchant_account_id"),
)


async def get(
    conn: AsyncConnection,
    application_id: str,
    merchant_account_id: str,
    connector_id: str,
    *,
    for_update: bool = False,
) -> Connector | None:
    """``for_update``: lock the row (removal: a checkout being recorded waits, or is waited for)."""
    params = {
        "connector_id": connector_id,
        "application_id": application_id,
        "merchant_account_id": merchant_account_id,
    }
    query = _GET.with_for_update() if for_update else _GET
    row = (await conn.execute(query, params)).mappings().first()
    return _connector(row) if row is not None else None


_HOLD = Prepared(
    select(connectors.c.id).where(connectors.c.id == bindparam("connector_id")).with_for_update(read=True)
)


async def hold(conn: AsyncConnection, connector_id: str) -> bool:
    """Lock the row FOR SHARE until the transaction ends (checkouts being recorded share it; a
    removal's FOR UPDATE waits for them, or they wait for it); False when it is gone."""
    return await _HOLD.first(conn, {"connector_id": connector_id}) is not None


_GET_ANY = Prepared(select(connectors).where(connectors.c.id == bindparam("connector_id")))


async def get_any(conn: AsyncConnection, connector_id: str) -> Connector | None:
    """By id alone: for provider notifications, which carry no API key."""
    row = await _GET_ANY.first(conn, {"connector_id": connector_id})
    return _connector(row) if row is not None else None


async def update_connector(
    conn: AsyncConnection,
    connector_id: str,
    *,
    updated_at: datetime,
    mode: Mode | None = None,
    enabled: bool | None = None,
    priority: int | None = None,
    encrypted_credentials: str | None = None,
) -> None:
    """Change the given settings (None: keep it; none of them can be cleared)."""
    changes = given_values(
        mode=mode.value if mode is not None else None,
        enabled=enabled,
        priority=priority,
        credentials=encrypted_credentials,
    )
    await conn.execute(
        update(connectors).where(connectors.c.id == connector_id).values(updated_at=updated_at, **changes)
    )


async def delete_unused(conn: AsyncConnection, connector_id: str) -> bool:
    """Delete the configuration unless a checkout used it (returns, notifications and refunds
    of those checkouts read it); True if deleted."""
    used = exists().where(checkouts.c.connector_id == connector_id)
    done = await conn.execute(delete(connectors).where(connectors.c.id == connector_id, ~used))
    return done.rowcount == 1
