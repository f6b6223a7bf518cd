"""PostgreSQL behind a pooler in transaction mode (PAYORCH_DATABASE_TRANSACTION_POOLING).

PgBouncer with ``pool_mode = transaction`` (before 1.21, which tracks prepared statements; Debian
bookworm ships 1.18) lends a server connection to a client for one transaction only, and outside
a transaction for one statement's messages up to their Sync. Three things payorch does by
default assume one server connection per client connection, and break there
(tests/test_pgbouncer.py shows each failure first, then the setting):

- **Named prepared statements.** asyncpg prepares each statement once per connection under a
  name of its own (``__asyncpg_stmt_1__``, ...; its statement cache, SQLAlchemy's cache above it,
  the statement lane, ``Prepared`` on the driver). Another client of the same server connection
  then prepares the same name ("prepared statement ... already exists"), or a name is missing
  on the server connection the next transaction got ("... does not exist"). With the setting,
  both caches are off (``unnamed_statements``): every statement is the unnamed one, parsed again
  each time it runs.
- **Statements outside a transaction.** asyncpg sends a statement as two exchanges (Parse and
  Describe, Sync; then Bind and Execute, Sync): outside a transaction the pooler may hand the
  second to another server connection, where the unnamed statement is another client's or none.
  payorch runs reads, compare-and-sets and the one-statement create of an intent in autocommit
  (docs/architecture.md, "Transactions"); with the setting each such step is one transaction
  (``pinned``; the statement lane's ``StatementLane``): a BEGIN and a COMMIT more per step.
- **LISTEN.** A LISTEN outlives its transaction only on its server connection, which the pooler
  lends to others: the worker's wake-up (payorch.webhooks.wakeups) would never hear a NOTIFY.
  With the setting the worker does not LISTEN and finds new deliveries by its poll
  (PG_POLL_SECONDS). The NOTIFY sent in the fan-out's transaction is harmless.

What holds without change: transactions (BEGIN to COMMIT stays on one server connection),
``application_name`` (a startup parameter PgBouncer tracks), timeouts (asyncpg's, client
side: nothing is SET on the server), no advisory locks, no SET, no temporary tables. Migrations
run in one transaction. The read replica's engine (PAYORCH_DATABASE_REPLICA_URL) is not
covered: reach the replica directly or through session pooling.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.prepared import driver_transaction


def unnamed_statements(transaction_pooling: bool) -> dict[str, object]:
    """asyncpg's connect arguments (the engine's, through SQLAlchemy's dialect, and the lane's):
    no statement cache in asyncpg nor in SQLAlchemy, so every statement is the unnamed one."""
    if not transaction_pooling:
        return {}
    return {"statement_cache_size": 0, "prepared_statement_cache_size": 0}


@asynccontextmanager
async def pinned(conn: AsyncConnection, transaction_pooling: bool) -> AsyncIterator[None]:
    """An autocommit step (``Database.reading``, ``each_statement``) as one transaction on the
    driver when a pooler lends server connections per transaction; else nothing."""
    if not transaction_pooling:
        yield
        return
    async with driver_transaction(conn):
        yield
