"""PostgreSQL: the engine's connections held between steps instead of checked out for each.

Each step (``Database.reading``, ``transaction``, and so the request's own ``Conn``) took a
connection from SQLAlchemy's pool, set AUTOCOMMIT on it and gave it back: each crossing
SQLAlchemy's greenlet bridge and firing the pool's events and reset, more than a statement
costs, ten steps a sandbox payment (docs/performance.md, "Instructions per payment"). Here a
connection, once checked out and set to autocommit (the engine's side: a step's transaction is
the driver's, payorch.db.prepared), stays so: a step takes an idle one from a list and puts it
back, as the statement lane does with its own (payorch.db.statements).

The pool still bounds them: a step first takes a turn (``asyncio.Semaphore`` of the pool's
size, first come first served), waited for at most the pool's timeout (``PoolTimeout``: 503,
payorch.db.unavailable), timed into ``payorch_db_pool_wait_seconds``; every step takes one, so
a checkout from the pool itself never waits.

A connection goes back to the list only in a state known to be idle: no transaction open on the
driver, not invalidated (a step cut short abandons its connection, payorch.db.bounds), not
closed by PostgreSQL, and of the engine's current pool (after ``engine.dispose()`` the held
ones are dropped as the pool's idle ones are). Anything else is dropped: closed without a word
to PostgreSQL, as ``abandon`` does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from payorch.db.bounds import abandon
from payorch.observability.db_pool import DB_POOL_WAIT

DEFAULT_POOL_SECONDS = 30.0  # SQLAlchemy's pool_timeout when none is given


class HeldConnections:
    def __init__(self, engine: AsyncEngine, size: int, pool_seconds: float | None) -> None:
        self._engine = engine
        self._turns = asyncio.Semaphore(size)  # first come, first served (module docstring)
        self._size = size
        self._pool_seconds = DEFAULT_POOL_SECONDS if pool_seconds is None else pool_seconds
        self._idle: list[AsyncConnection] = []
        self._closed = False

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[AsyncConnection]:
        """A connection for one step, the engine's side autocommit."""
        started = time.perf_counter()
        try:
            if self._turns.locked():
                try:
                    async with asyncio.timeout(self._pool_seconds):
                        await self._turns.acquire()
                except TimeoutError:
                    raise PoolTimeout(
                        f"QueuePool limit of size {self._size} overflow 0 reached, connection timed out, "
                        f"timeout {self._pool_seconds:.2f}"
                    ) from None
            else:
                await self._turns.acquire()  # a turn is free: taken at once
            try:
                conn = await self._take()
            except BaseException:
                self._turns.release()
                raise
        finally:
            DB_POOL_WAIT.observe(time.perf_counter() - started)
        try:
            yield conn
        finally:
            try:
                await self._give_back(conn)
            finally:
                self._turns.release()

    async def _take(self) -> AsyncConnection:
        idle = self._idle
        while idle:
            conn = idle.pop()
            if self._usable(conn):
                return conn
            await _drop(conn)
        if self._closed:
            raise RuntimeError("the database's connections are closed")
        conn = await self._engine.connect()
        try:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
        except BaseException:
            await conn.close()
            raise
        return conn

    def _usable(self, conn: AsyncConnection) -> bool:
        """Open on both sides, idle on the driver, and of the engine's current pool."""
        sync = conn.sync_connection
        if sync is None or sync.invalidated:
            return False
        fairy = sync.connection
        driver = fairy.driver_connection
        return (
            isinstance(driver, asyncpg.Connection)
            and not driver.is_closed()  # PostgreSQL may have closed it while idle
            and not driver.is_in_transaction()
            and getattr(fairy, "_pool", None) is self._engine.sync_engine.pool
        )

    async def _give_back(self, conn: AsyncConnection) -> None:
        if conn.closed or conn.invalidated:
            await conn.close()  # an invalidated one leaves the pool
            return
        try:
            if conn.in_transaction():
                # Autocommit: the engine's transaction is its own bookkeeping, nothing is sent.
                await conn.rollback()
        except Exception:  # noqa: BLE001 - as the pool's reset: the connection is dropped, not the step
            await _drop(conn)
            return
        except BaseException:
            await _drop(conn)
            raise
        if self._closed or not self._usable(conn):
            await _drop(conn)
            return
        self._idle.append(conn)

    async def close(self) -> None:
        """Give the idle connections back to the pool (``engine.dispose()`` then closes them);
        one in use goes back when its step ends."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()


async def _drop(conn: AsyncConnection) -> None:
    """A connection not to be used again: its socket closed without a word, its record dropped."""
    await abandon(conn)
    await conn.close()
