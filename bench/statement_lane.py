"""CPU per one-statement write: through the engine, on the statement lane, and on a held connection.

    PYTHONPATH=src:. .venv/bin/python -m bench.statement_lane [--statements 4000] [--rounds 2]

One process, one connection at a time, the same statement (``SELECT $1::text``) each way, timed
with the process's CPU clock (user + system) and its page faults: the engine as the create used
it before the lane (``Database.reading()``: checkout, AUTOCOMMIT, ``exec_driver_sql``, return),
the statement lane (``Database.one_statement()``: asyncpg's pool, ``fetchrow``) and, as the floor,
``fetchrow`` on one asyncpg connection held throughout (no pool at all).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from collections.abc import Awaitable, Callable

import asyncpg

from bench.compare import ADMIN_URL
from payorch.db import Database

SQL = "SELECT $1::text"


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

    try:
        for _ in range(rounds):
            for name, step in (("engine", engine), ("lane", lane), ("floor", floor)):
                await timed(name, step, statements)
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
