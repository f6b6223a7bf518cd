"""The delivery backlog gauges, read from the deliveries table at scrape time (SQLite and PG).

Runs on a database of its own holding just the columns the query reads, so it does not depend
on the webhooks migration being on this branch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
import sqlalchemy as sa
from prometheus_client import REGISTRY

from payorch.clock import FrozenClock
from payorch.db import Database
from payorch.db.types import UtcDateTime
from payorch.observability import backlog
from tests.databases import create_postgres_database, drop_postgres_database

NOW = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
table = sa.Table(
    "webhook_deliveries",
    sa.MetaData(),
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("next_attempt_at", UtcDateTime(), nullable=True),
)


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'backlog.db'}")
        yield db
        await db.dispose()
        return
    url, admin = await create_postgres_database()
    db = Database(url)
    try:
        yield db
    finally:
        await db.dispose()
        await drop_postgres_database(url, admin)


def gauges() -> tuple[float | None, float | None]:
    return (
        REGISTRY.get_sample_value("payorch_webhook_delivery_backlog_age_seconds"),
        REGISTRY.get_sample_value("payorch_webhook_delivery_backlog"),
    )


async def test_backlog_is_the_oldest_due_pending_delivery(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backlog, "_table_seen", False)
    runtime = SimpleNamespace(database=database, clock=FrozenClock(NOW))
    backlog.metrics.set_delivery_backlog(-1, -1)  # clamps to 0: a known starting point

    await backlog.refresh_delivery_backlog(runtime)  # no table yet: nothing to report
    assert gauges() == (0.0, 0.0)

    async with database.transaction() as conn:
        await conn.run_sync(lambda sync: table.metadata.create_all(sync))
    await backlog.refresh_delivery_backlog(runtime)
    assert gauges() == (0.0, 0.0)  # empty table

    rows = [
        ("whd_1", "PENDING", NOW - timedelta(seconds=90)),  # due for 90 s: the oldest
        ("whd_2", "PENDING", NOW - timedelta(seconds=5)),
        ("whd_3", "PENDING", NOW + timedelta(seconds=60)),  # not due yet
        ("whd_4", "SUCCEEDED", None),
        ("whd_5", "EXHAUSTED", None),
    ]
    async with database.transaction() as conn:
        await conn.execute(
            sa.insert(table), [{"id": i, "status": s, "next_attempt_at": t} for i, s, t in rows]
        )
    await backlog.refresh_delivery_backlog(runtime)
    assert gauges() == (90.0, 2.0)

    runtime.clock.advance(60)  # whd_3 becomes due; whd_1 has now waited 150 s
    await backlog.refresh_delivery_backlog(runtime)
    assert gauges() == (150.0, 3.0)
