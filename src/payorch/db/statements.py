"""PostgreSQL: the connections of one-statement writes (payorch.db.one_statement), on asyncpg.

A write that is one statement needs nothing of the engine's: no transaction, no ORM, no
compilation per request. Through the engine it still paid for the checkout, the AUTOCOMMIT
option, the statement and the return, each crossing SQLAlchemy's greenlet bridge (a greenlet
and a fresh frame stack, mapped and unmapped, per crossing): far more CPU than the same
statement on asyncpg (bench/statement_lane.py; docs/performance-decisions.md, "The statement lane"). The
create of a payment intent, the hottest write, runs here; everything else stays on the engine.

The lane holds its connections itself, not in asyncpg's pool: taking a connection from that pool
and giving it back cost about as much as the statement itself (its release runs in a task of its
own under ``asyncio.shield``, with a timeout and an idle timer re-armed each time;
docs/performance-decisions.md, "The lane's own connections"). Here a turn is a place in a
first-come-first-served queue (``asyncio.Semaphore``: asyncpg's pool hands a returned
connection to whoever asks next, so under load a waiting request could lose it again and again
to new arrivals) and an idle connection from a list. A connection goes back to the list only in a
state known to be idle: the block ended, or PostgreSQL answered a statement with an error. After
anything else (a cancellation, a timeout, a lost connection, an error of the block's own) a
statement may still be running on it, so it is closed and the next turn opens a new one. A
statement that ran out of time (payorch.db.bounds) has its connection closed in the background
(at most CLOSE_SECONDS), so a silent server does not hold the request longer: for that while the
lane may hold one connection more than its size.

Connections are opened on first use (a worker, which creates no intent, never opens one), at most
``size`` beside the engine's (docs/deployment.md counts both); PostgreSQL shows them as
``application_name`` "payorch statements" (pg_stat_activity).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeAlias

import asyncpg
from sqlalchemy.engine import make_url

from payorch.db.bounds import Bounds, LaneTimeout, out_of_time
from payorch.db.unavailable import raise_if_lost

# The engine's dialect for PostgreSQL (asyncpg's ``$n`` parameters), without an engine: what
# compiles the statements that run on asyncpg itself (one_statement.py, prepared.py).
ASYNCPG_DIALECT = make_url("postgresql+asyncpg://").get_dialect()()
# A string: asyncpg's classes are generic only in their type stubs.
StatementConnection: TypeAlias = "asyncpg.Connection[asyncpg.Record]"
APPLICATION_NAME = "payorch statements"
CLOSE_SECONDS = 5.0  # for a cancelled statement to stop, after which the connection is dropped


def asyncpg_dsn(url: str) -> str:
    """The engine's URL (``postgresql+asyncpg://...``) as asyncpg's DSN."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class StatementLane:
    def __init__(
        self, url: str, size: int, bounds: Bounds | None = None, *, transaction_pooling: bool = False
    ) -> None:
        """``bounds``: the connect, each statement and the wait for a turn (payorch.db.bounds).
        ``transaction_pooling``: behind a pooler in transaction mode, no named statements and each
        turn's statement in a transaction (payorch.db.pooling)."""
        self._dsn = asyncpg_dsn(url)
        self._bounds = bounds
        self._transaction_pooling = transaction_pooling
        self._turns = asyncio.Semaphore(size)  # first come, first served (module docstring)
        self._idle: list[StatementConnection] = []
        self._closed = False
        self._closing: set[asyncio.Task[None]] = set()  # closes of connections that ran out of time

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[StatementConnection]:
        """A connection of the lane; a lost one is DatabaseUnavailable (payorch.db.unavailable)."""
        connection: StatementConnection | None = None  # until connected, a timeout is the connect's
        try:
            async with self._turn():
                connection = await self._take()
                try:
                    if self._transaction_pooling:
                        async with connection.transaction():
                            yield connection
                    else:
                        yield connection
                except asyncpg.PostgresError:
                    self._give_back(connection)  # PostgreSQL answered (or closed it: then dropped)
                    raise
                except BaseException as exc:
                    if out_of_time(exc, connected=True):
                        # Its answer may never come (payorch.db.bounds): closed behind the
                        # request's back, so a silent server costs it nothing more.
                        closing = asyncio.create_task(_close(connection))
                        self._closing.add(closing)
                        closing.add_done_callback(self._closing.discard)
                    else:
                        await _close(connection)  # a statement may still run on it (docstring)
                    raise
                self._give_back(connection)
        except Exception as exc:
            raise_if_lost(exc, connected=connection is not None)
            raise

    @asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """A place in the lane, waited for at most ``bounds.pool_seconds`` (LaneTimeout)."""
        if self._bounds is None:
            async with self._turns:
                yield
            return
        try:
            async with asyncio.timeout(self._bounds.pool_seconds):
                await self._turns.acquire()
        except TimeoutError:
            raise LaneTimeout("no connection of the statement lane came free in time") from None
        try:
            yield
        finally:
            self._turns.release()

    async def _take(self) -> StatementConnection:
        while self._idle:
            connection = self._idle.pop()
            if not connection.is_closed():  # PostgreSQL may have closed it while idle
                return connection
        if self._closed:
            raise RuntimeError("the statement lane is closed")
        bounds = self._bounds
        return await asyncpg.connect(
            self._dsn,
            server_settings={"application_name": APPLICATION_NAME},
            timeout=60 if bounds is None else bounds.connect_seconds,  # 60: asyncpg's default
            command_timeout=None if bounds is None else bounds.statement_seconds,
            # asyncpg's statement cache off: the unnamed statement only (payorch.db.pooling)
            statement_cache_size=0 if self._transaction_pooling else 100,  # 100: asyncpg's default
        )

    def _give_back(self, connection: StatementConnection) -> None:
        if self._closed or connection.is_closed() or connection.is_in_transaction():
            connection.terminate()  # a lane statement never leaves a transaction open
        else:
            self._idle.append(connection)

    async def close(self) -> None:
        """Close the idle connections; one in use is closed when its block ends."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await connection.close()
        await asyncio.gather(*self._closing)


async def _close(connection: StatementConnection) -> None:
    """Close a connection a statement may still run on, within the lane's turn (so the lane never
    holds more than its size). asyncpg first waits for the cancel request it sent when the
    statement was cancelled, so PostgreSQL stops the statement instead of running it to its end
    on a backend nobody reads; ``terminate`` alone would drop that request with the socket."""
    with contextlib.suppress(Exception):  # close aborts the connection itself if it fails
        await connection.close(timeout=CLOSE_SECONDS)
