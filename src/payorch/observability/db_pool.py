"""How long the engine's pool makes a request wait for a PostgreSQL connection.

The pool keeps ``pool_size`` connections and no overflow (payorch/db/engine.py): beyond them a
request waits until one is returned (up to SQLAlchemy's 30 s pool timeout). This pool times each
checkout: microseconds while a connection is idle, the connect while the pool is still filling,
the wait once all are taken. The histogram lives here, not in metrics.py, because the database
package uses this module and metrics.py imports the database package.
"""

from __future__ import annotations

import time

from prometheus_client import Histogram
from sqlalchemy.pool import AsyncAdaptedQueuePool, ConnectionPoolEntry

DB_POOL_WAIT = Histogram(
    "payorch_db_pool_wait_seconds",
    "Time to get a connection from the database pool (PostgreSQL): about 0 when one is idle, "
    "the connect while the pool fills, the wait while all are in use.",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)


class MeasuredPool(AsyncAdaptedQueuePool):
    """SQLAlchemy's asyncio queue pool, with each checkout timed into ``DB_POOL_WAIT``."""

    def _do_get(self) -> ConnectionPoolEntry:
        started = time.perf_counter()
        try:
            return super()._do_get()
        finally:
            # A checkout that timed out (the pool's 30 s) waited too: counted in the last bucket.
            DB_POOL_WAIT.observe(time.perf_counter() - started)
