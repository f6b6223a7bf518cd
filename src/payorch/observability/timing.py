"""Where an answer's time went: ``Server-Timing: app;dur=..., db;dur=..., provider;dur=...`` on
every answer (docs/api.md, Conventions).

The edge (http/context.py) puts one ``Timing`` in a context variable per request; the places that
wait on the database or on a provider add what they waited, read with ``time.perf_counter``
around the wait:

- the database: each statement the engine runs (SQLAlchemy's ``before_cursor_execute`` and
  ``after_cursor_execute`` events, ``watch_engine``), each statement or BEGIN/COMMIT sent on the
  driver itself (db/prepared.py) and each write of the statement lane (db/one_statement.py);
  a pool or lane wait is not a statement and counts as payorch's own time;
- a provider: each call of providers/http.py's ``send``, over the network or in process to the
  simulator. While a call runs, statements are not counted as the database's: the in-process
  simulator's own statements are the provider's time, as a remote provider's would be.

``app`` is the rest of the time from the request's arrival at the edge to the answer's first
byte: payorch's own. The three add up to that time, so what payorch adds to a provider's latency
is ``app + db``. In-process calls (a MOCK connector calling the simulator) pass the edge by: their
time is the calling request's ``provider``. Outside a request (the worker, the command line)
there is no Timing and each of these is one context-variable read. Calls a request runs side by
side add up, so a share can exceed the wall time it overlapped."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine


class Timing:
    """Seconds of one request: waited on the database, on providers; calls to a provider open."""

    __slots__ = ("db", "provider", "in_provider")

    def __init__(self) -> None:
        self.db = 0.0
        self.provider = 0.0
        self.in_provider = 0


current: ContextVar[Timing | None] = ContextVar("payorch_timing", default=None)
_STARTED = "payorch.statement_started"  # in the engine connection's info, while a statement runs


def server_timing(seconds: float, timing: Timing) -> bytes:
    """The header's value for an answer ``seconds`` after the request arrived: ms, one decimal."""
    app = max(seconds - timing.db - timing.provider, 0.0)
    return (
        f"app;dur={app * 1000:.1f}, db;dur={timing.db * 1000:.1f}, provider;dur={timing.provider * 1000:.1f}"
    ).encode()


def add_db(seconds: float) -> None:
    timing = current.get()
    if timing is not None and not timing.in_provider:
        timing.db += seconds


class _Database:
    """``database()``'s block. A class, not a generator: it wraps every statement on the driver,
    and entering a generator's context costs several calls more."""

    __slots__ = ("_timing", "_started")

    def __enter__(self) -> None:
        self._timing = current.get()
        self._started = time.perf_counter()

    def __exit__(self, *_: object) -> None:
        timing = self._timing
        if timing is not None and not timing.in_provider:
            timing.db += time.perf_counter() - self._started


def database() -> _Database:
    """Around a statement sent on the driver: its time is the database's."""
    return _Database()


@asynccontextmanager
async def provider() -> AsyncIterator[None]:
    """Around a call to a provider: its time is the provider's, whatever runs inside it."""
    timing = current.get()
    if timing is None:
        yield
        return
    started = time.perf_counter()
    timing.in_provider += 1
    try:
        yield
    finally:
        timing.in_provider -= 1
        timing.provider += time.perf_counter() - started


def watch_engine(engine: AsyncEngine) -> None:
    """Count the time of each statement ``engine`` runs (its events run in the request's
    context: SQLAlchemy's greenlets carry the caller's context variables)."""

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _before(conn: Any, *_statement: Any) -> None:
        if current.get() is not None:
            conn.info[_STARTED] = time.perf_counter()

    @event.listens_for(engine.sync_engine, "after_cursor_execute")
    def _after(conn: Any, *_statement: Any) -> None:
        started = conn.info.pop(_STARTED, None)
        if started is not None:
            add_db(time.perf_counter() - started)
