"""The Database: one async engine, short explicit transactions, and the per-request connection.

SQLite (embedded default) runs in WAL mode with foreign keys on, and every transaction starts
with BEGIN IMMEDIATE: SQLite has one writer, and a read transaction that later writes would
otherwise fail with SQLITE_BUSY instead of waiting. Consequence for services: never hold a
transaction open while calling a provider (the in-process simulator writes too); use
``Database.transaction()`` around each atomic phase instead.

The SQLite file is created readable by its owner only (0600), before SQLite opens it: it holds
API key hashes and encrypted secrets, and SQLite gives its -wal and -shm files the main file's
mode, so they are private too.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from payorch.db.bounds import Bounds, abandon, cut_short
from payorch.db.held import HeldConnections
from payorch.db.pooling import pinned, unnamed_statements
from payorch.db.prepared import driver_transaction, statements_on_driver
from payorch.db.replica import Replica, ReplicaSettings
from payorch.db.statements import StatementConnection, StatementLane
from payorch.db.unavailable import may_write, raise_if_lost
from payorch.observability import timing

# PostgreSQL: connections of one-statement writes per process, beside the engine's pool_size.
STATEMENT_LANE_SIZE = 10


def async_url(url: str) -> str:
    """Map the documented URL forms to the async drivers."""
    if url.startswith("sqlite+aiosqlite://") or url.startswith("postgresql+asyncpg://"):
        return url
    if url.startswith("sqlite://"):
        return "sqlite+aiosqlite://" + url[len("sqlite://") :]
    if url.startswith("postgres://"):
        return "postgresql+asyncpg://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        return "postgresql+asyncpg://" + url[len("postgresql://") :]
    raise ValueError(f"unsupported database URL scheme: {url.split(':', 1)[0]}")


def sqlite_file(url: str) -> Path | None:
    """The file of a sqlite:/// URL (None for in-memory databases and other schemes)."""
    if not url.startswith("sqlite") or ":///" not in url:
        return None
    path = url.split(":///", 1)[1].split("?", 1)[0]
    return Path(path) if path and path != ":memory:" else None


def create_private(path: Path) -> None:
    """Create ``path`` (and its folder) with mode 0600 unless it exists; an existing file is kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


class Database:
    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 20,
        echo: bool = False,
        replica: ReplicaSettings | None = None,
        bounds: Bounds | None = None,
        transaction_pooling: bool = False,
    ) -> None:
        """``bounds``: how long a connect, a statement and a pool wait may take on PostgreSQL
        (payorch.db.bounds); None: unbounded (migrations, admin commands).
        ``transaction_pooling``: PostgreSQL is reached through a pooler in transaction mode
        (PAYORCH_DATABASE_TRANSACTION_POOLING; payorch.db.pooling)."""
        self.url = async_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self.transaction_pooling = transaction_pooling and not self.is_sqlite
        kwargs: dict[str, Any] = {"echo": echo}
        if not self.is_sqlite:
            # Every connection is kept (no overflow): an overflow connection is closed when it is
            # returned while pool_size others are idle, and under load that meant a new connection
            # every few requests (TCP, TLS probe, startup, cold prepared-statement cache). Beyond
            # pool_size, requests wait for a connection. Same maximum per process as before (10+10).
            kwargs.update(pool_size=pool_size, max_overflow=0, pool_pre_ping=False)
            connect_args = unnamed_statements(self.transaction_pooling)
            if bounds is not None:
                kwargs.update(pool_timeout=bounds.pool_seconds)
                connect_args.update(bounds.connect_args())
            kwargs.update(connect_args=connect_args)
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        timing.watch_engine(self.engine)  # each statement's time: Server-Timing's db
        self._statements = None
        self._held: HeldConnections | None = None
        if not self.is_sqlite:
            self._statements = StatementLane(
                self.url, STATEMENT_LANE_SIZE, bounds, transaction_pooling=self.transaction_pooling
            )
            # The engine's connections, held between steps (payorch.db.held): every PostgreSQL
            # step takes its connection there, the pool's wait timed there.
            pool_seconds = None if bounds is None else bounds.pool_seconds
            self._held = HeldConnections(self.engine, pool_size, pool_seconds)
        if self.is_sqlite:
            path = sqlite_file(self.url)
            if path is not None:
                create_private(path)
            _configure_sqlite(self.engine)
        else:
            _skip_closed_connections(self.engine)
        self._replica = None if replica is None else _replica(replica, pool_size)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """One atomic unit: commits when the block ends, rolls back if it raises.

        PostgreSQL: the transaction is the driver's own (BEGIN and COMMIT by asyncpg on the
        connection, the engine's side autocommit), so that prepared statements can run on the
        driver inside it (db/prepared.py); every other statement goes through the engine, inside
        the same transaction.

        A lost connection is DatabaseUnavailable (payorch.db.unavailable), never retried."""
        may_write()
        conn: AsyncConnection | None = None  # until connected, a timeout is the connect's
        try:
            if self.is_sqlite:
                async with self.engine.connect() as conn, conn.begin() as transaction:
                    yield conn
                    with timing.database():  # the COMMIT is no statement of the engine's events
                        await transaction.commit()
                return
            assert self._held is not None
            async with self._held.connection() as conn:
                try:
                    async with driver_transaction(conn):
                        with statements_on_driver(conn):
                            yield conn
                except BaseException as exc:
                    if cut_short(exc):  # BEGIN or COMMIT too (payorch.db.bounds)
                        await abandon(conn)
                    raise
        except Exception as exc:
            raise_if_lost(exc, connected=conn is not None)
            raise

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncConnection]:
        """A connection for read-only work (a GET): no transaction on PostgreSQL.

        Under READ COMMITTED each statement takes its own snapshot even inside a transaction, so
        BEGIN and COMMIT would buy a reader nothing but two round trips. SQLite keeps its usual
        transaction (a consistent snapshot there, and our BEGIN IMMEDIATE hook runs on every begin).
        A lost connection is DatabaseUnavailable; a read may be retried (payorch.db.unavailable).
        """
        conn: AsyncConnection | None = None  # until connected, a timeout is the connect's
        try:
            async with self._connection() as conn:
                if self.is_sqlite:
                    yield conn
                else:
                    try:
                        # Behind a transaction pooler the step is one transaction (db/pooling.py).
                        async with pinned(conn, self.transaction_pooling):
                            with statements_on_driver(conn):  # each statement its own: db/prepared.py
                                yield conn
                    except BaseException as exc:
                        if cut_short(exc):
                            await abandon(conn)  # never back to the pool (payorch.db.bounds)
                        raise
                if conn.in_transaction():
                    with timing.database():
                        await conn.commit()
        except Exception as exc:
            raise_if_lost(exc, connected=conn is not None)
            raise

    def _connection(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """A connection for one step: on PostgreSQL a held one, the engine's side autocommit
        (payorch.db.held); on SQLite the engine's."""
        if self._held is None:
            return self.engine.connect()
        return self._held.connection()

    def listing(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """A read for a list (http/deps.py ListConn): on the replica when one is configured and
        caught up, else as ``reading()`` (payorch.db.replica)."""
        if self._replica is None:
            return self.reading()
        return self._replica.reading(self.reading)

    def one_statement(self) -> AbstractAsyncContextManager[StatementConnection]:
        """PostgreSQL: a connection without a transaction, for a write that is a single statement
        (payorch.db.one_statement: atomic by itself, no BEGIN/COMMIT round trips), from the
        statement lane (payorch.db.statements), not the engine."""
        assert self._statements is not None, "one-statement writes are PostgreSQL's"
        may_write()
        return self._statements.connection()

    def each_statement(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """Statements that need no transaction together: reads and single-statement writes such
        as a compare-and-set, each atomic by itself. PostgreSQL: autocommit, no BEGIN/COMMIT;
        SQLite: one transaction, as every connection there (BEGIN IMMEDIATE). A compare-and-set
        writes: the request is not retried after a lost connection (payorch.db.unavailable)."""
        may_write()
        return self.reading()

    async def dispose(self) -> None:
        if self._replica is not None:
            await self._replica.dispose()
        if self._statements is not None:
            await self._statements.close()
        if self._held is not None:
            await self._held.close()
        await self.engine.dispose()


class Phases:
    """The transaction rule's second half: the phases of a multi-phase flow.

    The rule (docs/architecture.md, "Transactions"):

    - A single-phase request runs in the request's own transaction: its endpoint takes ``Conn``
      (or ``ReadConn`` for a read) from ``payorch.http.deps`` and hands that connection to the
      service, which never commits.
    - A multi-phase flow (a checkout, a buyer's return, a refund, every worker job) must not hold a
      transaction open while it calls a provider or sends a webhook. It receives one ``Phases``
      (``runtime_of(request).phases`` in an endpoint; the worker builds one per job) and opens
      each atomic phase with ``transaction()`` (or ``reading()`` for a read-only step). Nothing else opens a
      connection: no service touches ``Database`` or its engine.
    - A write that is one statement (PostgreSQL's create of an intent, payorch.db.one_statement)
      runs on ``one_statement()``: a statement is its own transaction. A step whose statements
      need no common transaction (reads, then one compare-and-set such as taking a lease) runs on
      ``each_statement()``.
    """

    def __init__(self, database: Database) -> None:
        self._database = database

    @property
    def is_sqlite(self) -> bool:
        return self._database.is_sqlite

    def transaction(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """One atomic phase: commits when the block ends, rolls back if it raises."""
        return self._database.transaction()

    def reading(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """A read-only step (no BEGIN/COMMIT on PostgreSQL; see Database.reading)."""
        return self._database.reading()

    def one_statement(self) -> AbstractAsyncContextManager[StatementConnection]:
        """PostgreSQL only: a write that is one statement (see Database.one_statement)."""
        return self._database.one_statement()

    def each_statement(self) -> AbstractAsyncContextManager[AsyncConnection]:
        """A step of reads and single-statement writes, each atomic alone (Database.each_statement)."""
        return self._database.each_statement()


def _replica(settings: ReplicaSettings, pool_size: int) -> Replica:
    """The replica's engine: as the primary's, each step bounded by the replica's own timeout."""
    timeout = settings.timeout_seconds
    engine = create_async_engine(
        async_url(settings.url),
        pool_size=pool_size,
        max_overflow=0,
        pool_pre_ping=False,
        pool_timeout=timeout,
        connect_args=Bounds(timeout, timeout, timeout).connect_args(),
    )
    _skip_closed_connections(engine)
    timing.watch_engine(engine)
    return Replica(engine, settings)


def _skip_closed_connections(engine: AsyncEngine) -> None:
    """A pooled connection PostgreSQL closed while it sat idle (a restart, a terminated backend)
    is replaced as it is taken, before anything is sent on it: asyncpg noticed the close already,
    so this costs no round trip (``pool_pre_ping`` would cost one per checkout)."""

    @event.listens_for(engine.sync_engine, "checkout")
    def _on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        if dbapi_connection.driver_connection.is_closed():
            raise DisconnectionError("PostgreSQL closed the connection while it was idle")


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let us issue BEGIN ourselves (pysqlite's implicit transactions are off).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
