"""CPU per one-statement write: through the engine, on the statement lane, and on a held connection.

    PYTHONPATH=src:. .venv/bin/python -m bench.statement_lane [--statements 4000] [--rounds 2]

One process, one connection at a time, the same statement (``SELECT $1::text``) each way, timed
with the process's CPU clock (user + system) and its page faults: the engine as the create used
it before the lane (``Database.reading()``: checkout, AUTOCOMMIT, ``exec_driver_sql``, return),
the statement lane (``Database.one_statement()``: asyncpg's pool, ``fetchrow``) and, as the floor,
``fetchrow`` on one asyncpg connection held throughout (no pool at all).

Then a statement inside a transaction held open, as a payment's steps run them: ``SELECT
$1::VARCHAR`` built once, through the engine (``AsyncConnection.execute`` in the engine's own
transaction, ``engine_tx``) and as a ``Prepared`` statement in ``Database.transaction()``, which
runs it on the driver (``driver_tx``, payorch.db.prepared); and a whole transaction of that one
statement each way (``engine_one``, ``driver_one``).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from collections.abc import Awaitable, Callable

import asyncpg
from sqlalchemy import String, bindparam, select

from bench.kit import ADMIN_URL
from payorch.db import Database
from payorch.db.prepared import Prepared

SQL = "SELECT $1::text"
PREPARED = Prepared(select(bindparam("x", type_=String).label("x")))


async def timed(name: str, step: Callable[[], Awaitable[object]], statements: int) -> None:
    for _ in range(300):  # warm up: connections opened, the statement prepared
        await step()
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    for _ in range(statements):
        await step()
    used, after = time.process_time() - started, resource.getrusage(resource.RUSAGE_SELF)
    faults = (after.ru_minflt - before.ru_minflt) / statements
    print(
        f"{name:<10} cpu_us_per_statement={1e6 * used / statements:6.1f} page_faults={faults:.2f}", flush=True
    )


async def main_async(url: str, statements: int, rounds: int) -> None:
    database = Database(url)
    held = await asyncpg.connect(url)

    async def engine() -> object:
        async with database.reading() as conn:
            return (await conn.exec_driver_sql(SQL, ("x",))).one()

    async def lane() -> object:
        async with database.one_statement() as conn:
            return await conn.fetchrow(SQL, "x")

    async def floor() -> object:
        return await held.fetchrow(SQL, "x")

    async def engine_one() -> object:
        async with database.engine.begin() as conn:
            return (await conn.execute(PREPARED.statement, {"x": "x"})).first()

    async def driver_one() -> object:
        async with database.transaction() as conn:
            return await PREPARED.first(conn, {"x": "x"})

    try:
        for _ in range(rounds):
            for name, step in (("engine", engine), ("lane", lane), ("floor", floor)):
                await timed(name, step, statements)
            async with database.engine.begin() as engine_tx, database.transaction() as driver_tx:

                async def in_engine_tx() -> object:
                    return (await engine_tx.execute(PREPARED.statement, {"x": "x"})).first()

                async def in_driver_tx() -> object:
                    return await PREPARED.first(driver_tx, {"x": "x"})

                await timed("engine_tx", in_engine_tx, statements)
                await timed("driver_tx", in_driver_tx, statements)
            await timed("engine_one", engine_one, statements // 2)
            await timed("driver_one", driver_one, statements // 2)
    finally:
        await held.close()
        await database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=ADMIN_URL, help="any PostgreSQL database")
    parser.add_argument("--statements", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main_async(args.database_url, args.statements, args.rounds))


if __name__ == "__main__":
    main()
