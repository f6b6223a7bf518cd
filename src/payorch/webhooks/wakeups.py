"""In-process wake-ups for delivery workers on SQLite (PostgreSQL uses LISTEN/NOTIFY instead).

The fan-out calls ``fire()`` while its transaction is still open. That is safe on SQLite only
because SQLite has one writer: a woken worker's claim starts with BEGIN IMMEDIATE, which waits
until the fan-out's transaction has committed (or rolled back), so it sees the new deliveries.
A worker in another process (``payorch serve`` runs it so) cannot be reached this way and
polls every 100 ms instead.
"""

from __future__ import annotations

from collections.abc import Callable

_listeners: set[Callable[[], None]] = set()


def subscribe(wake: Callable[[], None]) -> None:
    _listeners.add(wake)


def unsubscribe(wake: Callable[[], None]) -> None:
    _listeners.discard(wake)


def fire() -> None:
    for wake in list(_listeners):
        wake()
