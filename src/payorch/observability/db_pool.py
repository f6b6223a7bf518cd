"""How long a step waits for a PostgreSQL connection of the engine.

The engine keeps ``pool_size`` connections and no overflow (payorch/db/engine.py), held between
steps (payorch/db/held.py): beyond them a step waits for a turn until one is given back (up to
the pool timeout). Each take is timed: microseconds while a connection is idle, the connect while
the pool is still filling, the wait once all are taken. The histogram lives here, not in
metrics.py, because the database package uses this module and metrics.py imports the database
package.
"""

from __future__ import annotations

from prometheus_client import Histogram

DB_POOL_WAIT = Histogram(
    "payorch_db_pool_wait_seconds",
    "Time to get a connection from the database pool (PostgreSQL): about 0 when one is idle, "
    "the connect while the pool fills, the wait while all are in use.",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
