"""All SQL of applications and merchant accounts (records.py).

The statements run per request are built once, at import, with bind parameters for what
varies: building one per call cost more CPU than running it (docs/performance.md, "Statements
built once"). Those of the operator's command line and of start-up (creating, counting and
listing applications) stay as they were.
"""

from __future__ import annotations

from sqlalchemy import bindparam, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.applications.records import Application, MerchantAccount
from payorch.db.one_statement import Fragment
from payorch.db.records import column_values, record_of
from payorch.db.tables import applications, merchant_accounts


async def insert_application(conn: AsyncConnection, application: Application) -> None:
    await conn.execute(insert(applications).values(column_values(application)))


async def insert_merchant(conn: AsyncConnection, merchant: MerchantAccount) -> None:
    await conn.execute(insert(merchant_accounts).values(column_values(merchant)))


# A merchant never changes application and is never deleted, so a positive answer can be kept.
_KNOWN_MERCHANTS: set[tuple[str, str]] = set()
_KNOWN_MERCHANTS_MAX = 100_000


_MERCHANT_BELONGS_TO = select(merchant_accounts.c.id).where(
    merchant_accounts.c.id == bindparam("merchant_id"),
    merchant_accounts.c.application_id == bindparam("application_id"),
)


async def merchant_belongs_to(conn: AsyncConnection, merchant_id: str, application_id: str) -> bool:
    if (merchant_id, application_id) in _KNOWN_MERCHANTS:
        return True
    params = {"merchant_id": merchant_id, "application_id": application_id}
    found = (await conn.execute(_MERCHANT_BELONGS_TO, params)).first() is not None
    if found:
        if len(_KNOWN_MERCHANTS) >= _KNOWN_MERCHANTS_MAX:
            _KNOWN_MERCHANTS.clear()
        _KNOWN_MERCHANTS.add((merchant_id, application_id))
    return found


async def count_applications(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(applications))).scalar_one())


_LOCK_APPLICATION = (
    select(applications.c.id).where(applications.c.id == bindparam("application_id")).with_for_update()
)


async def lock_application(conn: AsyncConnection, application_id: str) -> None:
    """Lock the application's row until the transaction ends (PostgreSQL; SQLite's
    BEGIN IMMEDIATE serializes writers anyway)."""
    await conn.execute(_LOCK_APPLICATION, {"application_id": application_id})


_GET_APPLICATION = select(applications).where(applications.c.id == bindparam("application_id"))


async def get_application(conn: AsyncConnection, application_id: str) -> Application | None:
    result = await conn.execute(_GET_APPLICATION, {"application_id": application_id})
    row = result.mappings().first()
    return record_of(Application, row) if row is not None else None


async def list_applications(conn: AsyncConnection) -> list[Application]:
    """Oldest first: the first one is the sandbox `payorch serve` made on a fresh database."""
    query = select(applications).order_by(applications.c.created_at, applications.c.id)
    return [record_of(Application, row) for row in (await conn.execute(query)).mappings()]


_MERCHANTS_OF = (
    select(merchant_accounts)
    .where(merchant_accounts.c.application_id.in_(bindparam("application_ids", expanding=True)))
    .order_by(merchant_accounts.c.created_at, merchant_accounts.c.id)
)


async def merchants_of(conn: AsyncConnection, application_ids: list[str]) -> list[MerchantAccount]:
    result = await conn.execute(_MERCHANTS_OF, {"application_ids": application_ids})
    return [record_of(MerchantAccount, row) for row in result.mappings()]


# PostgreSQL, one statement (payorch.db.one_statement): a row when the merchant account is the
# application's (merchant_belongs_to, inside the statement that depends on it).
MERCHANT_OWNED_FRAGMENT = Fragment(
    "merchant_owned",
    "SELECT 1 FROM merchant_accounts WHERE id = CAST(:intent_merchant_account_id AS TEXT)"
    " AND application_id = CAST(:application_id AS TEXT)",
)
