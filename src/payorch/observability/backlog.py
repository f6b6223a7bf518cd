"""The webhook delivery backlog, read from the database when /metrics is scraped.

Any API replica can answer it (the backlog is shared by all workers), so it is not left to
whichever worker happens to be scraped. One indexed range query on (status, next_attempt_at).
"""

from __future__ import annotations

import sqlalchemy as sa

from payorch.db import Phases
from payorch.db.types import UtcDateTime
from payorch.observability import metrics

DELIVERIES_TABLE = "webhook_deliveries"
_DUE = sa.text(
    "SELECT count(*) AS due, min(next_attempt_at) AS oldest FROM webhook_deliveries "
    "WHERE status = 'PENDING' AND next_attempt_at <= :now"
).bindparams(sa.bindparam("now", type_=UtcDateTime())).columns(
    sa.column("due", sa.Integer), sa.column("oldest", UtcDateTime())
)
_table_seen = False


async def refresh_delivery_backlog(runtime: metrics.ScrapeSource) -> None:
    global _table_seen
    now = runtime.clock.now()
    async with Phases(runtime.database).reading() as conn:
        if not _table_seen:
            # Before the webhooks migration exists there is no backlog to report.
            _table_seen = await conn.run_sync(
                lambda sync: sa.inspect(sync).has_table(DELIVERIES_TABLE)
            )
            if not _table_seen:
                return
        row = (await conn.execute(_DUE, {"now": now})).one()
    age = (now - row.oldest).total_seconds() if row.oldest is not None else 0.0
    metrics.set_delivery_backlog(age, int(row.due or 0))
