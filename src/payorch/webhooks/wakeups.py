"""Waking idle delivery workers when new deliveries commit.

PostgreSQL: the fan-out sends NOTIFY in the event's transaction (repository.notify_workers);
``listen`` holds one dedicated connection that LISTENs on NOTIFY_CHANNEL and wakes the worker,
so an idle worker claims a new delivery milliseconds after the commit.

SQLite: the fan-out calls ``fire()`` while its transaction is still open. That is safe on SQLite
only because SQLite has one writer: a woken worker's claim starts with BEGIN IMMEDIATE, which
waits until the fan-out's transaction has committed (or rolled back), so it sees the new
deliveries. A worker in another process (``payorch serve`` runs it so) cannot be reached this
way and polls every 100 ms instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

log = logging.getLogger("payorch.worker.deliveries")

NOTIFY_CHANNEL = "payorch_webhook_deliveries"
RECONNECT_SECONDS = 1.0

_listeners: set[Callable[[], None]] = set()


def subscribe(wake: Callable[[], None]) -> None:
    _listeners.add(wake)


def unsubscribe(wake: Callable[[], None]) -> None:
    _listeners.discard(wake)


def fire() -> None:
    for wake in list(_listeners):
        wake()


async def listen(database_url: str, wake: Callable[[], None]) -> None:
    """LISTEN on NOTIFY_CHANNEL until cancelled, reconnecting when the connection drops.

    A raw asyncpg connection outside the engine's pool on purpose: it is held for the worker's
    whole life and never runs a transaction, so it must not take a pooled connection.
    """
    import asyncpg

    dsn = database_url.replace("postgresql+asyncpg://", "postgresql://")
    while True:
        conn = None
        try:
            conn = await asyncpg.connect(dsn)
            closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def on_close(_conn: object, closed: asyncio.Future[None] = closed) -> None:
                if not closed.done():
                    closed.set_result(None)

            conn.add_termination_listener(on_close)
            await conn.add_listener(NOTIFY_CHANNEL, lambda *_args: wake())
            wake()  # catch up with what was committed while we were not listening
            await closed
            log.warning("notification connection lost; reconnecting")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("cannot LISTEN for new deliveries; polling meanwhile")
            await asyncio.sleep(RECONNECT_SECONDS)
        finally:
            if conn is not None and not conn.is_closed():
                await conn.close()
