"""A database that cannot be reached, or a connection lost under a request: 503, retried once
where that is safe.

Every way into the database (``Database.transaction``, ``reading``, ``each_statement``,
``one_statement`` and the request's own connection) turns a lost connection into
``DatabaseUnavailable`` (503 ``SERVICE_UNAVAILABLE`` with ``Retry-After``): PostgreSQL
restarting or terminating the backend (57P01 and the other 57P0x), the socket closed under a
statement, a refused or timed-out connect, PostgreSQL's ``too many connections``; and a step
that ran out of its time (payorch.db.bounds: a statement, the wait for a pooled connection). A statement
PostgreSQL answered with an error of its own (a constraint, a timeout) is not a lost connection.

Which requests are retried (payorch.http.read_retry), and why only those: a GET or HEAD whose
every step so far was a read (``Database.reading``). Anything that can write marks the request
(``may_write``) as it opens: a transaction may have committed when its COMMIT's answer was lost,
a multi-phase flow may have committed an earlier phase, and a provider is only ever called after
such a step (the lease of a checkout is a write), so the server cannot know what a retry would
repeat. Those answer 503 and the client retries with the same Idempotency-Key, which replays
what committed or does it once. A pooled connection PostgreSQL closed while it sat idle is not
a lost request at all: the engine never hands it out (payorch.db.engine), nothing is sent on it.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NoReturn

import asyncpg
from sqlalchemy.exc import DBAPIError

from payorch.db.bounds import out_of_time
from payorch.errors import ApiError, DatabaseUnavailable

RETRY_AFTER_SECONDS = 1
# On a 503 of an in-process call to our own routes (the MOCK simulator, payorch.http.client):
# the callee's database, which is this process's own, was unavailable. The caller answers that
# as its own 503 (payorch.providers.http), not as the provider failing: in MOCK mode a pool
# exhausted under load otherwise read as a provider outage, and a buyer's return went back to
# the shop with the payment unconfirmed.
OWN_DATABASE_HEADER = "X-Payorch-Own-Database"
log = logging.getLogger("payorch.db")

# Errors PostgreSQL or asyncpg give when the connection is gone or cannot be made; OSError covers
# a refused or reset socket, and a connect that timed out (TimeoutError is one).
_LOST = (
    asyncpg.PostgresConnectionError,  # 08xxx: the connection does not exist, failed, was refused
    asyncpg.exceptions.OperatorInterventionError,  # 57xxx less 57014, below: shut down, restarting
    asyncpg.exceptions.TooManyConnectionsError,  # 53300: no connection to be had now
    OSError,
)
_NOT_LOST = (asyncpg.exceptions.QueryCanceledError,)  # 57014: a statement timeout, not a loss


@dataclass(slots=True)
class Attempt:
    """One try at a request (payorch.http.read_retry): what its database steps were."""

    may_write: bool = False  # it opened something that can write
    lost: bool = False  # a connection was lost or could not be made


attempt_var: ContextVar[Attempt | None] = ContextVar("payorch_db_attempt", default=None)


def may_write() -> None:
    """Called as a step that can write opens: the request is not to be retried."""
    attempt = attempt_var.get()
    if attempt is not None:
        attempt.may_write = True


def raise_if_lost(exc: BaseException, *, connected: bool = True) -> None:
    """Raise DatabaseUnavailable (from ``exc``) if ``exc`` says the connection is gone, or that
    a step ran out of its time (payorch.db.bounds).

    ``connected``: the connection was made and handed out. Before that a timeout is the connect
    timing out (a loss: a read is tried once more); after it, a timeout is the statement's own
    bound, and the wait for a pooled connection is the pool's: 503 at once, not tried again (a
    silent or exhausted database would make the second try wait as long)."""
    if isinstance(exc, ApiError):
        return
    if out_of_time(exc, connected=connected):
        log.warning("database step out of time: %s", type(exc).__name__)
        raise DatabaseUnavailable(RETRY_AFTER_SECONDS) from exc
    if not connection_lost(exc, connected=connected):
        return
    log.warning("database connection lost or refused: %s", type(exc).__name__)
    raise_unavailable(exc)


def raise_unavailable(exc: BaseException) -> NoReturn:
    """Raise DatabaseUnavailable (from ``exc``), the try marked lost: a read is run once more.
    Also for a read the replica failed (payorch.db.replica), which the retry reads on the primary."""
    attempt = attempt_var.get()
    if attempt is not None:
        attempt.lost = True
    raise DatabaseUnavailable(RETRY_AFTER_SECONDS) from exc


def connection_lost(exc: BaseException, *, connected: bool = True) -> bool:
    """``exc``, or an error it was raised from, says the connection is gone or cannot be made
    (``connected``: see raise_if_lost)."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 8:  # a chain is short; the bound guards a cycle
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True  # SQLAlchemy's own judgment: it dropped the connection from its pool
        if isinstance(current, TimeoutError):
            return not connected
        if isinstance(current, _LOST) and not isinstance(current, _NOT_LOST):
            return True
        # asyncpg says "connection is closed" with InterfaceError, which also covers misuse.
        if isinstance(current, asyncpg.InterfaceError) and "closed" in str(current):
            return True
        current = current.__cause__ or current.__context__
        seen += 1
    return False
