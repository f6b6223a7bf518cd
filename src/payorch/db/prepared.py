"""Statements built once that PostgreSQL runs on the driver itself, without the engine between.

Through the engine every statement pays for SQLAlchemy's execution (a greenlet crossing, the
compiled cache's lookup, an execution context, a result object): more CPU than
asyncpg's own ``fetch`` on the same connection (bench/statement_lane.py; docs/performance-decisions.md,
"Reads on the driver").
``Database.reading()`` (autocommit: every statement atomic alone) and ``Database.transaction()``
(on PostgreSQL the driver's own BEGIN and COMMIT, the engine's side autocommit; the request's
own ``Conn`` too) mark their connection, and a ``Prepared`` statement run on a marked connection
goes to that connection's asyncpg connection, compiled once; the engine's statements on the same
connection run in the same transaction. A connection in the engine's own transaction can be
marked with ``statements_in_engine_transaction``: a ``Prepared`` statement goes to the driver
there only once the engine has begun its transaction on it (at its first statement), so that
the engine's rollback undoes it. Anywhere else (SQLite, a step not marked) a ``Prepared``
statement runs through the engine as any statement does, so a repository function serves both.
``undo`` rolls a step's transaction back, whichever it is, and the step goes on in a new one.

asyncpg answers what the engine would: aware UTC datetimes (the engine's UtcDateTime gives the
same) and JSON decoded (the engine's dialect installs that codec on every connection it opens);
tests/test_prepared.py compares both answers, read by read. Parameters go to the driver as the
engine would send them: each through its column type's bind processor for asyncpg (a JSON
value serialized, a datetime checked aware and put in UTC), so a write with JSON runs here too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import TypeAlias, TypeVar

import asyncpg
from sqlalchemy import Delete, Insert, Select, Update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.types import TypeEngine

from payorch.db.bounds import abandon, cut_short
from payorch.db.records import Row
from payorch.db.statements import ASYNCPG_DIALECT
from payorch.observability import timing

_STEP = "payorch.step_on_driver"  # in the pooled connection's info while a step is marked
_ENGINE_STEP = "payorch.engine_transaction"  # the same, for the engine's own transaction
_TRANSACTION = "payorch.driver_transaction"  # the driver's transaction of a step (driver_transaction)
Statement: TypeAlias = "Select[*tuple[object, ...]] | Update | Insert | Delete"
Answer = TypeVar("Answer")
# The connection itself failed (PostgreSQL restarted, the socket closed): the engine would
# invalidate it so that its pool never hands it out again, and so do we.
_BROKEN = (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.InterfaceError, OSError)


@contextmanager
def statements_on_driver(conn: AsyncConnection) -> Iterator[None]:
    """Mark ``conn`` (PostgreSQL, the engine's side autocommit) for the block: its prepared
    statements run on the driver."""
    conn.info[_STEP] = True
    try:
        yield
    finally:
        if not conn.invalidated:  # an invalidated connection's info is gone with it
            conn.info.pop(_STEP, None)


@contextmanager
def statements_in_engine_transaction(conn: AsyncConnection) -> Iterator[None]:
    """Mark ``conn`` (the engine's own transaction, PostgreSQL) for the block: its prepared
    statements run on the driver while the driver is in the engine's transaction."""
    conn.info[_ENGINE_STEP] = True
    try:
        yield
    finally:
        if not conn.invalidated:
            conn.info.pop(_ENGINE_STEP, None)


def _driver(conn: AsyncConnection) -> asyncpg.Connection[asyncpg.Record] | None:
    info = conn.info
    if info.get(_STEP):
        return _driver_of(conn)
    if info.get(_ENGINE_STEP):
        driver = _driver_of(conn)
        # Before the engine's first statement (and after its rollback) no transaction is open on
        # the driver: the statement goes through the engine, which begins it.
        return driver if driver is not None and driver.is_in_transaction() else None
    return None


def _driver_of(conn: AsyncConnection) -> asyncpg.Connection[asyncpg.Record] | None:
    sync = conn.sync_connection
    driver = sync.connection.driver_connection if sync is not None else None
    return driver if isinstance(driver, asyncpg.Connection) else None


@asynccontextmanager
async def driver_transaction(conn: AsyncConnection) -> AsyncIterator[None]:
    """One transaction on ``conn``'s asyncpg connection (``conn`` itself autocommit, so the
    engine sends no BEGIN of its own and its statements run inside this one): BEGIN, then
    COMMIT when the block ends, ROLLBACK if it raises. A connection that could leave with its
    transaction still open (a rollback cut short) is invalidated, never handed out again; one
    whose statement ran out of time or was cancelled is closed at once (payorch.db.bounds)."""
    driver = _driver_of(conn)
    assert driver is not None, "a transaction on the driver needs asyncpg"
    transaction = driver.transaction()
    await _guarded(conn, transaction.start)
    conn.info[_TRANSACTION] = transaction
    try:
        yield
    except BaseException as exc:
        try:
            if cut_short(exc):
                await abandon(conn)  # a ROLLBACK would wait for the cut statement's answer
            elif not conn.invalidated:
                await conn.info[_TRANSACTION].rollback()
        except _BROKEN:
            await conn.invalidate()
        raise
    else:
        await _guarded(conn, conn.info[_TRANSACTION].commit)
    finally:
        if not conn.invalidated:
            conn.info.pop(_TRANSACTION, None)
            if driver.is_in_transaction():
                await abandon(conn)


async def undo(conn: AsyncConnection) -> None:
    """Roll back what the step's transaction on ``conn`` did so far (a refused call, a raced
    write); the step goes on in a new transaction. The driver's (``driver_transaction``) is
    rolled back and begun again; the engine's is rolled back, and its next statement begins the
    next one."""
    transaction = conn.info.get(_TRANSACTION)
    if transaction is None:
        await conn.rollback()
        return
    await _guarded(conn, transaction.rollback)
    driver = _driver_of(conn)
    assert driver is not None
    again = driver.transaction()
    await _guarded(conn, again.start)
    conn.info[_TRANSACTION] = again


async def _guarded(conn: AsyncConnection, call: Callable[[], Awaitable[Answer]]) -> Answer:
    try:
        with timing.database():  # Server-Timing's db (observability/timing.py)
            return await call()
    except _BROKEN:
        conn.info.pop(_STEP, None)
        await conn.invalidate()
        raise


_Position: TypeAlias = "tuple[str, Callable[[object], object] | None]"  # a parameter, its processor


def _processor(column_type: TypeEngine[object]) -> Callable[[object], object] | None:
    """What the engine does to a value of ``column_type`` before asyncpg gets it (None: nothing)."""
    return column_type.dialect_impl(ASYNCPG_DIALECT).bind_processor(ASYNCPG_DIALECT)


class Prepared:
    """A statement built once; on a marked connection, compiled once for asyncpg and run there."""

    def __init__(self, statement: Statement) -> None:
        self.statement = statement
        self._compiled: tuple[str, tuple[_Position, ...], dict[str, object]] | None = None

    def _arguments(self, parameters: Mapping[str, object]) -> tuple[str, list[object]]:
        if self._compiled is None:
            compiled = self.statement.compile(dialect=ASYNCPG_DIALECT)
            # Values the statement holds itself (a literal compared with, a LIMIT) are parameters
            # too; a parameter the caller must give and did not is a KeyError, never a NULL.
            own = {name: bind.value for name, bind in compiled.binds.items() if not bind.required}
            positions = tuple(
                (name, _processor(compiled.binds[name].type)) for name in compiled.positiontup or ()
            )
            self._compiled = (str(compiled), positions, own)
        sql, positions, own = self._compiled
        arguments = []
        for name, process in positions:
            value = parameters[name] if name in parameters else own[name]
            arguments.append(value if process is None else process(value))
        return sql, arguments

    async def first(self, conn: AsyncConnection, parameters: Mapping[str, object]) -> Row | None:
        driver = _driver(conn)
        if driver is None:
            return (await conn.execute(self.statement, parameters)).mappings().first()
        sql, arguments = self._arguments(parameters)
        return await _guarded(conn, lambda: driver.fetchrow(sql, *arguments))

    async def all(self, conn: AsyncConnection, parameters: Mapping[str, object]) -> list[Row]:
        driver = _driver(conn)
        if driver is None:
            return list((await conn.execute(self.statement, parameters)).mappings().all())
        sql, arguments = self._arguments(parameters)
        return list(await _guarded(conn, lambda: driver.fetch(sql, *arguments)))

    async def rowcount(self, conn: AsyncConnection, parameters: Mapping[str, object]) -> int:
        """Rows a write changed (an UPDATE or DELETE without RETURNING)."""
        driver = _driver(conn)
        if driver is None:
            return (await conn.execute(self.statement, parameters)).rowcount
        sql, arguments = self._arguments(parameters)
        status = await _guarded(conn, lambda: driver.execute(sql, *arguments))  # e.g. "UPDATE 1"
        return int(status.rsplit(" ", 1)[-1])

    async def execute(self, conn: AsyncConnection, parameters: Mapping[str, object]) -> None:
        """A write whose count of rows changed does not matter (recording, releasing, storing)."""
        await self.rowcount(conn, parameters)
