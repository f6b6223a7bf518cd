"""PAYORCH_DATABASE_REPLICA_URL against a real streaming replica (tests/replica_clusters.py).

Lists read the replica (counted there with pg_stat_statements, and shown by a list that lacks
what the paused replica has not applied); an intent read right after its create comes from the
primary; a replica paused beyond PAYORCH_REPLICA_MAX_LAG_SECONDS or stopped changes nothing a
client sees: lists answer 200 with the new rows, read from the primary, and
payorch_replica_fallback_total says why.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager

import asyncpg
import httpx
import pytest

from payorch.db.migrate import upgrade_in_thread
from tests.dashboard.signing import sign_in
from tests.kit import Served, create_intent, make_settings, served
from tests.observability.scrape import scrape, value
from tests.replica_clusters import Clusters, primary_and_replica, run

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

CATCH_UP_SECONDS = 15
FALLBACKS = "payorch_replica_fallback_total"
# The statement of the intents list (keyset page, newest first), as pg_stat_statements shows it.
INTENT_LIST = "%FROM payment_intents%ORDER BY%"
# The payments export's keyset batch (exports/repository.py).
PAYMENT_EXPORT = "%FROM payments%ORDER BY%"


@pytest.fixture(scope="module")
def clusters() -> Iterator[Clusters]:
    with primary_and_replica() as made:
        upgrade_in_thread(made.primary_url)  # the replica follows
        run(
            made.bin / "psql",
            "-h",
            "127.0.0.1",
            "-p",
            str(made.primary_port),
            "-U",
            "postgres",
            "-c",
            "CREATE EXTENSION pg_stat_statements",
        )
        yield made


def serving(clusters: Clusters, *, max_lag: float, check: float) -> AbstractAsyncContextManager[Served]:
    return served(
        make_settings(
            clusters.primary_url,
            database_replica_url=clusters.replica_url,
            replica_max_lag_seconds=max_lag,
            replica_check_seconds=check,
        )
    )


async def fetch_value(url: str, query: str, *args: object) -> object:
    conn = await asyncpg.connect(url, timeout=5)
    try:
        return await asyncio.wait_for(conn.fetchval(query, *args), 10)
    finally:
        await conn.close()


async def list_statements(url: str, pattern: str = INTENT_LIST) -> int:
    """How many times the server ran the intents list's statement (or ``pattern``'s)."""
    calls = await fetch_value(
        url,
        "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query ILIKE $1",
        pattern,
    )
    assert isinstance(calls, int)
    return calls


async def caught_up(clusters: Clusters) -> None:
    written = await fetch_value(clusters.primary_url, "SELECT pg_current_wal_lsn()::text")
    for _ in range(CATCH_UP_SECONDS * 20):
        if await fetch_value(
            clusters.replica_url, "SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn", written
        ):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the replica did not catch up")


async def set_replay(clusters: Clusters, paused: bool) -> None:
    call = "pg_wal_replay_pause()" if paused else "pg_wal_replay_resume()"
    await fetch_value(clusters.replica_url, f"SELECT {call}::text")


async def listed_ids(served: Served) -> list[str]:
    listed = await served.client.get("/v1/payment-intents", headers=served.app.headers)
    assert listed.status_code == 200, listed.text
    return [item["id"] for item in listed.json()["items"]]


async def exported(served: Served) -> httpx.Response:
    """The payments export of 2000-2100 (with no payment yet, its header line alone)."""
    answer = await served.client.get(
        "/v1/exports/payments",
        headers=served.app.headers,
        params={"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z"},
    )
    assert answer.status_code == 200, answer.text
    return answer


async def measured_below(served: Served, seconds: float) -> None:
    """Until the process's last lag measure (in the background) is below ``seconds``."""
    for _ in range(CATCH_UP_SECONDS * 20):
        if value(await scrape(served.client), "payorch_replica_lag_seconds") < seconds:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no measure found the replica caught up")


async def fallbacks(served: Served, reason: str) -> float:
    return value(await scrape(served.client), FALLBACKS, reason=reason)


async def test_lists_read_the_replica_and_a_created_intent_reads_back_from_the_primary(
    clusters: Clusters,
) -> None:
    async with serving(clusters, max_lag=3600, check=0) as served:
        first = await create_intent(served.client, served.app, external_reference="order-1")
        await caught_up(clusters)
        on_replica, on_primary = (
            await list_statements(clusters.replica_url),
            await list_statements(clusters.primary_url),
        )
        for _ in range(3):
            assert await listed_ids(served) == [first["id"]]
        assert await list_statements(clusters.replica_url) == on_replica + 3
        assert await list_statements(clusters.primary_url) == on_primary

        # An export reads the replica too, batch by batch (one batch: no payment yet).
        on_replica, on_primary = (
            await list_statements(clusters.replica_url, PAYMENT_EXPORT),
            await list_statements(clusters.primary_url, PAYMENT_EXPORT),
        )
        await exported(served)
        assert await list_statements(clusters.replica_url, PAYMENT_EXPORT) == on_replica + 1
        assert await list_statements(clusters.primary_url, PAYMENT_EXPORT) == on_primary

        await set_replay(clusters, paused=True)  # the replica stops applying what it receives
        try:
            second = await create_intent(served.client, served.app, external_reference="order-2")
            read = await served.client.get(f"/v1/payment-intents/{second['id']}", headers=served.app.headers)
            assert read.status_code == 200, read.text
            assert {k: read.json()[k] for k in second} == second  # the primary's: all of it
            # Within the tolerated hour of lag, the list is still the replica's: without it.
            assert await listed_ids(served) == [first["id"]]
        finally:
            await set_replay(clusters, paused=False)
        await caught_up(clusters)
        assert await listed_ids(served) == [second["id"], first["id"]]


async def test_a_replica_lagging_beyond_the_setting_is_not_read(clusters: Clusters) -> None:
    async with serving(clusters, max_lag=1, check=0) as served:
        first = await create_intent(served.client, served.app, external_reference="order-1")
        await caught_up(clusters)
        on_replica = await list_statements(clusters.replica_url)
        assert await listed_ids(served) == [first["id"]]
        assert await list_statements(clusters.replica_url) == on_replica + 1
        lag = value(await scrape(served.client), "payorch_replica_lag_seconds")
        assert 0 <= lag < 1

        await set_replay(clusters, paused=True)
        try:
            second = await create_intent(served.client, served.app, external_reference="order-2")
            await asyncio.sleep(1.5)  # the replica's last applied transaction ages past 1 s
            counted = await fallbacks(served, "lag")
            on_replica, on_primary = (
                await list_statements(clusters.replica_url),
                await list_statements(clusters.primary_url),
            )
            assert await listed_ids(served) == [second["id"], first["id"]]
            assert await list_statements(clusters.replica_url) == on_replica
            assert await list_statements(clusters.primary_url) == on_primary + 1
            samples = await scrape(served.client)
            assert value(samples, FALLBACKS, reason="lag") == counted + 1
            assert value(samples, "payorch_replica_lag_seconds") > 1
        finally:
            await set_replay(clusters, paused=False)

        await caught_up(clusters)  # back in use once a measure finds it caught up
        await measured_below(served, 1)  # measures run in the background, 50 ms apart here
        on_replica = await list_statements(clusters.replica_url)
        assert await listed_ids(served) == [second["id"], first["id"]]
        assert await list_statements(clusters.replica_url) == on_replica + 1


async def test_a_list_whose_replica_connection_dies_under_it_is_answered_from_the_primary(
    clusters: Clusters,
) -> None:
    async with serving(clusters, max_lag=5, check=60) as served:
        first = await create_intent(served.client, served.app, external_reference="order-1")
        await caught_up(clusters)
        assert await listed_ids(served) == [first["id"]]  # one pooled connection on the replica
        backend = await fetch_value(
            clusters.replica_url,
            "SELECT pid FROM pg_stat_activity"
            " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        )
        assert isinstance(backend, int)
        counted = await fallbacks(served, "down")
        os.kill(backend, signal.SIGSTOP)  # the next list's statement hangs on it...
        try:
            listing = asyncio.create_task(listed_ids(served))
            await asyncio.sleep(0.5)
            assert not listing.done()
            os.kill(backend, signal.SIGTERM)  # ...until its backend ends under it
        finally:
            os.kill(backend, signal.SIGCONT)
        assert await asyncio.wait_for(listing, 10) == [first["id"]]
        assert await fallbacks(served, "down") == counted + 1  # the retry read the primary


LISTS = ("/v1/payment-intents", "/v1/payments", "/v1/events", "/v1/admin/webhook-deliveries")
PAGES = ("/dashboard/payments", "/dashboard/overview")


async def test_a_stopped_replica_changes_nothing_a_client_sees(clusters: Clusters) -> None:
    # check=60: the verdict "in use" is cached when the replica stops; the connect tells.
    async with serving(clusters, max_lag=5, check=60) as served:
        await sign_in(served.client, served.app)
        first = await create_intent(served.client, served.app, external_reference="order-1")
        await caught_up(clusters)
        on_replica = await list_statements(clusters.replica_url)
        assert await listed_ids(served) == [first["id"]]
        assert await list_statements(clusters.replica_url) == on_replica + 1

        await asyncio.to_thread(clusters.stop_replica)
        second = await create_intent(served.client, served.app, external_reference="order-2")
        counted = await fallbacks(served, "down")
        for path in LISTS:
            answer = await served.client.get(path, headers=served.app.headers)
            assert answer.status_code == 200, (path, answer.text)
        assert await listed_ids(served) == [second["id"], first["id"]]
        events = await served.client.get("/v1/events", headers=served.app.headers)
        assert second["id"] in events.text
        for page in PAGES:
            answer = await served.client.get(page)
            assert answer.status_code == 200, (page, answer.text)
        assert str(second["id"]) in (await served.client.get("/dashboard/payments")).text
        samples = await scrape(served.client)
        assert value(samples, FALLBACKS, reason="down") == counted + len(LISTS) + 3 + len(PAGES)
        assert math.isnan(value(samples, "payorch_replica_lag_seconds"))
        # An export with the replica stopped: read from the primary, and counted.
        assert (await exported(served)).text.startswith("payment_id,")
        assert await fallbacks(served, "down") == counted + len(LISTS) + 3 + len(PAGES) + 1
