"""How long a database step may take, and what becomes of a connection whose step ran out of time.

PostgreSQL that stops answering (a silent network, a proxy that stopped relaying without
closing, a frozen host) must cost a request a known time, never the whole outage. An API
process and a worker (payorch.composition) bound each step with ``Bounds``
(PAYORCH_DATABASE_CONNECT_TIMEOUT_SECONDS, _STATEMENT_TIMEOUT_SECONDS, _POOL_TIMEOUT_SECONDS;
docs/deployment.md, "When PostgreSQL stops answering"):

- a connect (TCP, TLS, startup): asyncpg's connect ``timeout``;
- each round trip (a statement, its prepare the first time on a connection, BEGIN, COMMIT):
  asyncpg's ``command_timeout``, which raises TimeoutError in the statement's caller;
- the wait for a pooled connection (the engine's pool, the statement lane's turns).

The request then answers 503 (payorch.db.unavailable) without a second try: a database that is
silent or out of connections would make the retry wait as long again.

A connection whose statement ran out of time, or was cancelled, is closed at once and never
reused (``abandon``): asyncpg makes its next statement wait, without a bound, for PostgreSQL to
answer the cancel of the previous one, and a rollback on it would wait the same. Without
``Bounds`` (``payorch migrate``, the admin commands, tests) nothing is bounded, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

import asyncpg
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True, slots=True)
class Bounds:
    connect_seconds: float
    statement_seconds: float
    pool_seconds: float

    def connect_args(self) -> dict[str, object]:
        """asyncpg.connect's arguments (the engine's ``connect_args``, the lane's connect)."""
        return {"timeout": self.connect_seconds, "command_timeout": self.statement_seconds}


class LaneTimeout(PoolTimeout):
    """No turn of the statement lane came within ``pool_seconds`` (payorch.db.statements)."""


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the errors it was raised from, nearest first."""
    current: BaseException | None = exc
    for _ in range(8):  # a chain is short; the bound guards a cycle
        if current is None:
            return
        yield current
        current = current.__cause__ or current.__context__


def out_of_time(exc: BaseException, *, connected: bool) -> bool:
    """``exc`` (or what it was raised from) is a pool wait or, once connected, a statement that
    ran out of time. Before the connection is handed out, a TimeoutError is the connect's
    (payorch.db.unavailable: a lost connection)."""
    for cause in causes(exc):
        if isinstance(cause, PoolTimeout):
            return True
        if isinstance(cause, TimeoutError):
            return connected
    return False


def cut_short(exc: BaseException) -> bool:
    """A statement on the connection may be left without its answer: ran out of time, or the
    task running it was cancelled."""
    return isinstance(exc, TimeoutError | asyncio.CancelledError) or out_of_time(exc, connected=True)


async def abandon(conn: AsyncConnection) -> None:
    """Close ``conn``'s socket without a word to PostgreSQL and drop it from its pool (an
    invalidation alone would first try a polite close, waiting up to 2 s on a silent server)."""
    if conn.closed or conn.invalidated:
        return
    driver = driver_of(conn)
    if driver is not None:
        driver.terminate()
    await conn.invalidate()


def driver_of(conn: AsyncConnection) -> asyncpg.Connection[asyncpg.Record] | None:
    """``conn``'s asyncpg connection (None once closed or invalidated, or on SQLite)."""
    if conn.closed or conn.invalidated:
        return None
    sync = conn.sync_connection
    driver = sync.connection.driver_connection if sync is not None else None
    return driver if isinstance(driver, asyncpg.Connection) else None
