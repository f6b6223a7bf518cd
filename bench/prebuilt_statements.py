"""CPU per statement: a SQLAlchemy statement built at each call, against the same statement built
once with bound parameters, and asyncpg alone as the floor.

    PYTHONPATH=src:. .venv/bin/python -m bench.prebuilt_statements [--statements 3000] [--rounds 2]

On a fresh PostgreSQL database with payorch's tables, inside one transaction on one connection
(as a checkout's phase runs its statements), each way runs the checkout's lease (an UPDATE with
an OR) and its active-checkout read (a SELECT with ORDER BY and LIMIT), timed with the process's
CPU clock. "built" constructs the statement per call, as the repositories did; "once" executes a
module-level statement with a parameters dict; "asyncpg" sends the same SQL as a prepared
statement on asyncpg's own connection (no SQLAlchemy at all).
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
from sqlalchemy import bindparam, or_, select, update

from bench.kit import ADMIN_URL, fresh_database
from payorch.db import Database
from payorch.db.migrate import upgrade_in_thread
from payorch.db.tables.providers import checkouts

ACTIVE = "ACTIVE"
SELECT_ONCE = (
    select(checkouts)
    .where(checkouts.c.payment_intent_id == bindparam("intent_id"), checkouts.c.status == ACTIVE)
    .order_by(checkouts.c.created_at.desc())
    .limit(1)
)
LEASE_ONCE = (
    update(checkouts)
    .where(
        checkouts.c.id == bindparam("checkout_id"),
        or_(checkouts.c.lease_until.is_(None), checkouts.c.lease_until <= bindparam("now")),
    )
    .values(lease_until=bindparam("until"))
)


def positional(statement: Any, dialect: Any, values: dict[str, object]) -> tuple[str, list[object]]:
    """The statement's SQL in asyncpg's $n form and its arguments in that order."""
    compiled = statement.compile(dialect=dialect)
    given = {**compiled.params, **values}
    return str(compiled), [given[name] for name in compiled.positiontup]


async def timed(name: str, step: Callable[[], Awaitable[object]], statements: int) -> None:
    for _ in range(200):
        await step()
    started = time.process_time()
    for _ in range(statements):
        await step()
    used = time.process_time() - started
    # Each step is two statements (the read and the lease).
    print(f"{name:<8} cpu_us_per_statement={1e6 * used / (2 * statements):6.1f}", flush=True)


async def measure(url: str, statements: int, rounds: int) -> None:
    database = Database(url)
    raw = await asyncpg.connect(url)
    now = datetime.now(UTC)
    try:
        async with database.engine.connect() as conn:
            await conn.begin()

            async def built() -> object:
                read = (
                    select(checkouts)
                    .where(checkouts.c.payment_intent_id == "payi_x", checkouts.c.status == ACTIVE)
                    .order_by(checkouts.c.created_at.desc())
                    .limit(1)
                )
                await conn.execute(read)
                lease = (
                    update(checkouts)
                    .where(
                        checkouts.c.id == "chk_x",
                        or_(checkouts.c.lease_until.is_(None), checkouts.c.lease_until <= now),
                    )
                    .values(lease_until=now)
                )
                return await conn.execute(lease)

            async def once() -> object:
                await conn.execute(SELECT_ONCE, {"intent_id": "payi_x"})
                return await conn.execute(LEASE_ONCE, {"checkout_id": "chk_x", "now": now, "until": now})

            select_sql, select_args = positional(SELECT_ONCE, conn.dialect, {"intent_id": "payi_x"})
            lease_values = {"checkout_id": "chk_x", "now": now, "until": now}
            lease_sql, lease_args = positional(LEASE_ONCE, conn.dialect, lease_values)
            raw_transaction = raw.transaction()
            await raw_transaction.start()

            async def floor() -> object:
                await raw.fetch(select_sql, *select_args)
                return await raw.execute(lease_sql, *lease_args)

            for _ in range(rounds):
                for name, step in (("built", built), ("once", once), ("asyncpg", floor)):
                    await timed(name, step, statements)
            await raw_transaction.rollback()
            await conn.rollback()
    finally:
        await raw.close()
        await database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create a database")
    parser.add_argument("--statements", type=int, default=3000, help="steps (read + lease) per way and round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with fresh_database(args.admin_url, f"payorch_stmts_{uuid.uuid4().hex[:8]}") as url:
        upgrade_in_thread(url)
        asyncio.run(measure(url, args.statements, args.rounds))


if __name__ == "__main__":
    main()
