"""Cost of an autocommit checkout on PostgreSQL: the connection's isolation level set at each
checkout (``conn.execution_options(isolation_level="AUTOCOMMIT")``) against an engine view made
once (``engine.execution_options(isolation_level="AUTOCOMMIT")``, sharing the pool).

    PYTHONPATH=src:. python -m bench.autocommit_checkout [--url postgresql://postgres@127.0.0.1:5432/test]

One engine, one pooled connection (``pool_size=1``, as ``payorch.db.Database`` keeps its
connections), sequential checkouts. Prints microseconds per checkout, the best of ``--rounds``
rounds (each way goes first in every other round), for a bare checkout and return, and for a
checkout that runs ``SELECT 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from payorch.db.engine import async_url

SELECT_1 = text("SELECT 1")
Use = Callable[[AsyncConnection], Awaitable[None]]


async def nothing(_: AsyncConnection) -> None:
    return None


async def select_1(conn: AsyncConnection) -> None:
    await conn.execute(SELECT_1)


async def per_checkout(engine: AsyncEngine, use: Use, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        async with engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await use(conn)
    return (time.perf_counter() - started) / n * 1e6


async def view(engine: AsyncEngine, use: Use, n: int) -> float:
    autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
    started = time.perf_counter()
    for _ in range(n):
        async with autocommit.connect() as conn:
            await use(conn)
    return (time.perf_counter() - started) / n * 1e6


async def main_async(url: str, n: int, rounds: int) -> None:
    engine = create_async_engine(async_url(url), pool_size=1, max_overflow=0)
    try:
        for use in (nothing, select_1):
            best: dict[str, float] = {}
            ways = [("per checkout", per_checkout), ("engine view", view)]
            for _ in range(rounds):
                ways.reverse()  # each goes first in every other round
                for label, way in ways:
                    await way(engine, use, n // 10)  # warm
                    best[label] = min(best.get(label, float("inf")), await way(engine, use, n))
            figures = ", ".join(f"{label} {us:.1f} us" for label, us in best.items())
            print(f"{use.__name__}: {figures} (best of {rounds} rounds of {n})")
    finally:
        await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--checkouts", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main_async(args.url, args.checkouts, args.rounds))


if __name__ == "__main__":
    main()
