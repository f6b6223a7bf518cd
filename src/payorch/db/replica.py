"""Reads a streaming replica may serve (PAYORCH_DATABASE_REPLICA_URL): ``Database.listing()``,
taken by list endpoints as ``ListConn`` (payorch.http.deps).

Which reads go there is docs/deployment.md's "Read replicas": the application-wide lists and the
dashboard's lists and overview. Everything that decides money, single objects, lists under one
object and configuration lists read the primary, as every write does.

When the replica serves a list. Each process measures the replica's lag at most every
``check_seconds``, on the connection the list is about to use, and keeps the verdict until the
next measure:

- lag is ``now() - pg_last_xact_replay_timestamp()``, the age of the last transaction the replica
  applied; it counts as 0 while the replica has applied all the WAL it received and its WAL
  receiver is connected (an idle primary sends nothing, and the age alone would keep growing).
  A server not in recovery (the primary's own URL given again) counts as 0.
- lag beyond ``max_lag_seconds``: lists read the primary until a measure finds it caught up.
- the replica cannot be connected to, or the measure fails or takes over CHECK_TIMEOUT_SECONDS:
  lists read the primary until the next measure (``check_seconds`` later) succeeds.
- a list's statement on the replica loses its connection or is cancelled by a recovery conflict:
  the replica counts as down, and the request answers DatabaseUnavailable marked as a lost read,
  which payorch.http.read_retry holds back and runs once more, then on the primary.

Each list read from the primary for one of these reasons calls ``on_fallback(reason)``
(payorch_replica_fallback_total), each measure ``on_lag(seconds or None)``; the composition
root wires them to the metrics (the metrics module imports this package, not the reverse).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from payorch.db.prepared import statements_on_driver
from payorch.db.unavailable import connection_lost, raise_unavailable

# A replica that does not answer must cost a list little before it reads the primary.
CONNECT_TIMEOUT_SECONDS = 2.0
CHECK_TIMEOUT_SECONDS = 2.0

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
    on_fallback: Callable[[str], None] = _ignore
    on_lag: Callable[[float | None], None] = _ignore


class Replica:
    def __init__(self, engine: AsyncEngine, settings: ReplicaSettings) -> None:
        self.engine = engine
        self._settings = settings
        self._fallback: Fallback | None = None  # None: lists read the replica
        self._next_measure = 0.0  # time.monotonic(); 0: measure on first use

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
        try:
            with statements_on_driver(conn):
                yield conn
        except Exception as exc:
            if connection_lost(exc) or _conflict(exc):
                self._set(Fallback.DOWN, f"a read failed ({type(exc).__name__})")
                raise_unavailable(exc)
            raise
        finally:
            await conn.close()

    async def _connection(self) -> AsyncConnection | None:
        now = time.monotonic()
        measure = now >= self._next_measure
        if not measure and self._fallback is not None:
            self._settings.on_fallback(self._fallback)
            return None
        if measure:  # before any await: concurrent lists do not all measure
            self._next_measure = now + self._settings.check_seconds
        conn: AsyncConnection | None = None
        try:
            conn = await self.engine.connect()
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            if measure:
                lag = await asyncio.wait_for(self._lag(conn), CHECK_TIMEOUT_SECONDS)
                self._settings.on_lag(lag)
                beyond = lag > self._settings.max_lag_seconds
                self._set(Fallback.LAG if beyond else None, f"lag {lag:.3f} s")
        except Exception as exc:  # noqa: BLE001 - whatever the replica does, lists read the primary
            if conn is not None:
                with contextlib.suppress(Exception):  # a measure cut short may still run on it
                    await conn.invalidate()
                    await conn.close()
            self._settings.on_lag(None)
            self._set(Fallback.DOWN, f"{type(exc).__name__}: {exc}")
            conn = None
        if self._fallback is not None:
            if conn is not None:
                await conn.close()
            self._settings.on_fallback(self._fallback)
            return None
        return conn

    async def _lag(self, conn: AsyncConnection) -> float:
        lag = (await conn.execute(LAG_QUERY)).scalar_one()
        return float(lag)

    def _set(self, fallback: Fallback | None, why: str) -> None:
        if fallback is Fallback.DOWN:
            # Not tried again before the next measure is due.
            self._next_measure = max(self._next_measure, time.monotonic() + self._settings.check_seconds)
        if fallback != self._fallback:
            if fallback is None:
                log.info("database replica back in use: %s", why)
            else:
                log.warning("lists read the primary (replica %s): %s", fallback.value, why)
        self._fallback = fallback

    async def dispose(self) -> None:
        await self.engine.dispose()


def _conflict(exc: BaseException) -> bool:
    current: BaseException | None = exc
    for _ in range(8):  # a chain is short; the bound guards a cycle
        if current is None:
            return False
        if isinstance(current, _CONFLICTS):
            return True
        current = current.__cause__ or current.__context__
    return False
