"""Reads a streaming replica may serve (PAYORCH_DATABASE_REPLICA_URL): ``Database.listing()``,
taken by list endpoints as ``ListConn`` (payorch.http.deps).

Which reads go there is docs/deployment.md's "Read replicas": the application-wide lists and the
dashboard's lists and overview. Everything that decides money, single objects, lists under one
object and configuration lists read the primary, as every write does.

When the replica serves a list. Each process measures the replica's lag in a task of its own,
every ``check_seconds`` (at least MIN_CHECK_SECONDS apart), and lists follow the last verdict:
no list waits for a measure, except the process's first list, which waits for the first measure
at most ``timeout_seconds`` (then reads the primary if it has none).

- lag is ``now() - pg_last_xact_replay_timestamp()``, the age of the last transaction the replica
  applied; it counts as 0 while the replica has applied all the WAL it received and its WAL
  receiver is connected (an idle primary sends nothing, and the age alone would keep growing).
  A server not in recovery (the primary's own URL given again) counts as 0.
- lag beyond ``max_lag_seconds``: lists read the primary until a measure finds it caught up.
- the replica cannot be connected to, or the measure fails: lists read the primary until a
  measure succeeds.
- a list's connect to the replica fails: that list reads the primary, and so do the next until a
  measure succeeds.
- a list's statement on the replica loses its connection, runs out of ``timeout_seconds`` (a
  replica that stopped answering) or is cancelled by a recovery conflict: the replica counts as
  down, and the request answers DatabaseUnavailable marked as a lost read, which
  payorch.http.read_retry holds back and runs once more, then on the primary.

Every step on the replica is bounded by ``timeout_seconds`` (PAYORCH_REPLICA_TIMEOUT_SECONDS):
the wait for a pooled connection, the connect, a list's whole read (its socket is cut at the
deadline) and each round trip of a measure. A replica that stops answering costs a list at most
that, then its answer comes from the primary.

Each list read from the primary for one of these reasons calls ``on_fallback(reason)``
(payorch_replica_fallback_total), each measure ``on_lag(seconds or None)``; the composition
root wires them to the metrics (the metrics module imports this package, not the reverse).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from payorch.db.bounds import abandon, causes, cut_short, driver_of, out_of_time
from payorch.db.prepared import statements_on_driver
from payorch.db.unavailable import connection_lost, raise_unavailable

# With check_seconds 0, measures follow one another this far apart (not in a busy loop).
MIN_CHECK_SECONDS = 0.05

LAG_QUERY = text(
    "SELECT CASE"
    " WHEN NOT pg_is_in_recovery() THEN 0"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()"
    "  AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN 0"
    " ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 'Infinity')"
    " END::float8"
)
# On a replica a read-only statement meets these only as recovery conflicts (PostgreSQL cancels
# it to apply WAL): the replica's fault, read again on the primary.
_CONFLICTS = (asyncpg.exceptions.SerializationError, asyncpg.exceptions.DeadlockDetectedError)

log = logging.getLogger("payorch.db")


class Fallback(StrEnum):
    """Why lists read the primary although a replica is configured."""

    LAG = "lag"  # measured beyond max_lag_seconds
    DOWN = "down"  # unreachable, its lag unmeasurable, or it failed a read


def _ignore(_value: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class ReplicaSettings:
    url: str
    max_lag_seconds: float
    check_seconds: float
    timeout_seconds: float
    on_fallback: Callable[[str], None] = _ignore
    on_lag: Callable[[float | None], None] = _ignore


class Replica:
    def __init__(self, engine: AsyncEngine, settings: ReplicaSettings) -> None:
        self.engine = engine
        self._settings = settings
        self._fallback: Fallback | None = None  # None: lists read the replica
        self._measured = asyncio.Event()  # set by the first measure
        self._measuring: asyncio.Task[None] | None = None

    @asynccontextmanager
    async def reading(
        self, primary: Callable[[], AbstractAsyncContextManager[AsyncConnection]]
    ) -> AsyncIterator[AsyncConnection]:
        """A read-only connection on the replica (autocommit), or ``primary()``'s."""
        conn = await self._connection()
        if conn is None:
            async with primary() as fallback:
                yield fallback
            return
        # The whole read within the timeout: asyncpg bounds each round trip alone (a statement
        # not yet prepared makes two), so past the deadline the socket is cut under it.
        deadline = asyncio.get_running_loop().call_later(self._settings.timeout_seconds, _cut, conn)
        try:
            with statements_on_driver(conn):
                yield conn
        except BaseException as exc:
            if cut_short(exc):
                await abandon(conn)  # never back to the pool (payorch.db.bounds)
            if isinstance(exc, Exception) and (
                out_of_time(exc, connected=True) or connection_lost(exc) or _conflict(exc)
            ):
                self._set(Fallback.DOWN, f"a read failed ({type(exc).__name__})")
                raise_unavailable(exc)
            raise
        finally:
            deadline.cancel()
            await conn.close()

    async def _connection(self) -> AsyncConnection | None:
        if self._measuring is None:
            self._measuring = asyncio.create_task(self._measure_forever(), name="replica lag")
        if not self._measured.is_set():  # the process's first lists: the first measure
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._measured.wait(), self._settings.timeout_seconds)
            if not self._measured.is_set():
                self._settings.on_fallback(Fallback.DOWN)
                return None
        if self._fallback is not None:
            self._settings.on_fallback(self._fallback)
            return None
        try:
            conn = await self.engine.connect()
            await conn.execution_options(isolation_level="AUTOCOMMIT")
        except Exception as exc:  # noqa: BLE001 - whatever the replica does, lists read the primary
            self._settings.on_lag(None)  # unmeasurable too
            self._set(Fallback.DOWN, f"{type(exc).__name__}: {exc}")
            self._settings.on_fallback(Fallback.DOWN)
            return None
        return conn

    async def _measure_forever(self) -> None:
        while True:
            await self._measure()
            self._measured.set()
            await asyncio.sleep(max(self._settings.check_seconds, MIN_CHECK_SECONDS))

    async def _measure(self) -> None:
        """One measure of the lag, each step bounded (the replica engine's timeouts)."""
        conn: AsyncConnection | None = None
        try:
            conn = await self.engine.connect()
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            lag = float((await conn.execute(LAG_QUERY)).scalar_one())
        except Exception as exc:  # noqa: BLE001 - whatever the replica does, lists read the primary
            if conn is not None:
                with contextlib.suppress(Exception):
                    await abandon(conn)
            self._settings.on_lag(None)
            self._set(Fallback.DOWN, f"{type(exc).__name__}: {exc}")
            return
        await conn.close()
        self._settings.on_lag(lag)
        self._set(Fallback.LAG if lag > self._settings.max_lag_seconds else None, f"lag {lag:.3f} s")

    def _set(self, fallback: Fallback | None, why: str) -> None:
        if fallback != self._fallback:
            if fallback is None:
                log.info("database replica back in use: %s", why)
            else:
                log.warning("lists read the primary (replica %s): %s", fallback.value, why)
        self._fallback = fallback

    async def dispose(self) -> None:
        if self._measuring is not None:
            self._measuring.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._measuring
        await self.engine.dispose()


def _cut(conn: AsyncConnection) -> None:
    """Close ``conn``'s socket under whatever it waits for (the read then fails as a lost
    connection, and is answered from the primary)."""
    driver = driver_of(conn)
    if driver is not None:
        driver.terminate()


def _conflict(exc: BaseException) -> bool:
    return any(isinstance(cause, _CONFLICTS) for cause in causes(exc))
