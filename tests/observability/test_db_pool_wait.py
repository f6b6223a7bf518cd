"""payorch_db_pool_wait_seconds: a request that finds every pooled PostgreSQL connection taken
waits, and /metrics shows how long (observability/db_pool.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.db import Database
from tests.kit import Sandbox
from tests.observability.scrape import Samples, scrape, value

# Well over the 0.25 s bucket the test counts: on a loaded two-core machine the request's task may
# reach the pool a few tenths of a second after the hold began (a 0.4 s hold once left no wait
# over 0.25 s in a full run at load 3-6).
HELD_SECONDS = 1.0


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    if not database_url.startswith("postgresql"):
        pytest.skip("the pool is PostgreSQL's: SQLite's file needs no connection pool")
    db = Database(database_url, pool_size=1)  # one connection: the test can take it all
    yield db
    await db.dispose()


def slow_checkouts(samples: Samples) -> float:
    """Checkouts that took longer than 0.25 s."""
    return value(samples, "payorch_db_pool_wait_seconds_count") - value(
        samples, "payorch_db_pool_wait_seconds_bucket", le="0.25"
    )


async def test_a_request_waiting_for_the_pool_is_measured(
    client: httpx.AsyncClient, sandbox: Sandbox, database: Database
) -> None:
    before = await scrape(client)
    assert value(before, "payorch_db_pool_wait_seconds_count") > 0  # sandbox and scrape checked out
    # The histogram is the process's: earlier tests on this worker (a loaded machine) may have
    # left slow checkouts of their own, so only what this test adds is compared.

    started = time.monotonic()
    async with database.reading():  # the pool's only connection, taken
        waiting = asyncio.create_task(client.get("/v1/payment-intents/payi_unknown", headers=sandbox.headers))
        await asyncio.sleep(HELD_SECONDS)
        assert not waiting.done()
    assert (await waiting).status_code == 404
    took = time.monotonic() - started

    after = await scrape(client)
    assert slow_checkouts(after) - slow_checkouts(before) == 1
    waited = value(after, "payorch_db_pool_wait_seconds_sum") - value(
        before, "payorch_db_pool_wait_seconds_sum"
    )
    # The request starts waiting a moment after the hold began (its task is scheduled, then
    # reaches the pool): a quiet CI run measured 0.399 s of a 0.4 s hold; allow half a second for
    # that on a loaded machine. At most what the test saw pass (a bound that grows with the load).
    assert HELD_SECONDS - 0.5 <= waited <= took, (waited, took)
