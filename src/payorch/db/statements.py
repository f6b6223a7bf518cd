"""PostgreSQL: the connections of one-statement writes (payorch.db.one_statement), on asyncpg's pool.

A write that is one statement needs nothing of the engine's: no transaction, no ORM, no
compilation per request. Through the engine it still paid for the checkout, the AUTOCOMMIT
option, the statement and the return, each crossing SQLAlchemy's greenlet bridge (a greenlet
and a fresh 16 KiB frame stack, mapped and unmapped, per crossing): about 160 us of CPU and five
page faults per statement against about 48 us on asyncpg's pool (bench/statement_lane.py,
docs/performance.md). The create of a payment
intent, the hottest write, runs here; everything else stays on the engine.

The pool is opened on first use (a worker, which creates no intent, never opens it) and holds at
most ``size`` connections beside the engine's (docs/deployment.md counts both); PostgreSQL shows
them as ``application_name`` "payorch statements" (pg_stat_activity).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeAlias

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from sqlalchemy.engine import make_url

# The engine's dialect for PostgreSQL (asyncpg's ``$n`` parameters), without an engine: what
# compiles the statements that run on asyncpg itself (one_statement.py, prepared.py).
ASYNCPG_DIALECT = make_url("postgresql+asyncpg://").get_dialect()()
# A string: asyncpg's classes are generic only in their type stubs.
StatementConnection: TypeAlias = "PoolConnectionProxy[asyncpg.Record]"
APPLICATION_NAME = "payorch statements"


def asyncpg_dsn(url: str) -> str:
    """The engine's URL (``postgresql+asyncpg://...``) as asyncpg's DSN."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _nothing_to_reset(_connection: asyncpg.Connection[asyncpg.Record]) -> None:
    # A lane connection only ever runs single statements outside a transaction: no session state
    # to undo, so no reset query (a round trip) on every return. asyncpg still rolls back a
    # transaction left open and waits out a cancelled query before the connection is reused.
    return None


class StatementLane:
    def __init__(self, url: str, size: int) -> None:
        self._dsn = asyncpg_dsn(url)
        self._size = size
        self._pool: asyncpg.Pool[asyncpg.Record] | None = None
        self._opening = asyncio.Lock()
        # First come, first served: asyncpg's pool hands a returned connection to whoever asks
        # next, so under load a waiting request could lose it again and again to new arrivals
        # (asyncio.Queue lets them barge in). asyncio's Semaphore queues arrivals behind waiters.
        self._turns = asyncio.Semaphore(size)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[StatementConnection]:
        async with self._turns:
            pool = self._pool or await self._open()
            async with pool.acquire() as connection:
                yield connection

    async def _open(self) -> asyncpg.Pool[asyncpg.Record]:
        async with self._opening:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._dsn,
                    min_size=0,
                    max_size=self._size,
                    reset=_nothing_to_reset,
                    server_settings={"application_name": APPLICATION_NAME},
                )
            return self._pool

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
