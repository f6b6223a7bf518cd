"""Fault test on PostgreSQL: two `payorch worker` processes, a stream of events, one worker
killed with SIGKILL mid-way. Every delivery ends SUCCEEDED and the receiver saw every event."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from payorch.db.tables.webhooks import webhook_deliveries
from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.webhooks.helpers import (
    counts,
    create_endpoint,
    create_intent,
    start_worker,
    wait_started,
)
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.slow

EVENTS = 150


async def claims_of(runtime: Runtime, pid: int | None) -> int:
    async with runtime.database.transaction() as conn:
        query = select(func.count()).where(
            webhook_deliveries.c.lease_token.like(f"{pid:x}-%"),
            webhook_deliveries.c.status == "PENDING",
        )
        return int((await conn.execute(query)).scalar_one())


@pytest.mark.slow
@pytest.mark.postgres
async def test_sigkill_of_one_worker_loses_nothing(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    database_url: str,
    tmp_path: Path,
) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("many worker processes share one PostgreSQL (SKIP LOCKED); not SQLite")
    paths = ["/sleep/0.05", "/sleep/0.1", "/sleep/0.5"]
    for path in paths:
        await create_endpoint(client, sandbox, receiver.url(path))
    doomed = await start_worker(database_url, tmp_path / "worker-a.log")
    survivor = await start_worker(database_url, tmp_path / "worker-b.log")
    try:
        await wait_started(tmp_path / "worker-a.log")
        await wait_started(tmp_path / "worker-b.log")
        killed_at = None
        created = 0
        for n in range(EVENTS):
            await create_intent(client, sandbox, f"order-{n}")
            created += 1
            if n == EVENTS // 3:
                # Kill it while it holds claims (its lease tokens start with its pid). The
                # survivor may be taking everything at this moment: keep feeding events until
                # the doomed worker holds some, for up to 30 s.
                held = 0
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    held = await claims_of(runtime, doomed.pid)
                    if held:
                        break
                    await create_intent(client, sandbox, f"extra-{created}")
                    created += 1
                    await asyncio.sleep(0.02)
                doomed.send_signal(signal.SIGKILL)
                await doomed.wait()
                assert held > 0, "the worker held no claim when killed"
                killed_at = len(receiver.requests)
            await asyncio.sleep(0.01)
        assert killed_at is not None and doomed.returncode == -signal.SIGKILL

        expected = created * len(paths)
        deadline = time.monotonic() + 90  # the dead worker's leases end after 12 s
        while time.monotonic() < deadline:
            state = await counts(runtime, sandbox.application_id)
            if state.get("SUCCEEDED", 0) == expected:
                break
            await asyncio.sleep(0.5)
        assert state == {"SUCCEEDED": expected}, state

        events = await client.get("/v1/events", params={"limit": 100}, headers=sandbox.headers)
        assert events.status_code == 200
        seen = {(r.path, r.headers["x-pay-event-id"]) for r in receiver.requests}
        assert len(seen) == expected  # every (endpoint, event) at least once
        duplicates = len(receiver.requests) - len(seen)
        print(
            f"\nreceived {len(receiver.requests)} for {expected} deliveries: "
            f"{duplicates} duplicate(s) from the killed worker's claims"
        )

        # SIGTERM: the survivor finishes what is in flight and exits cleanly.
        survivor.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(survivor.wait(), 20) == 0
    finally:
        for process in (doomed, survivor):
            if process.returncode is None:
                process.kill()
                await process.wait()


async def test_a_worker_process_delivers_on_either_database(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    database_url: str,
    tmp_path: Path,
) -> None:
    """The topology of `payorch serve`: API in one process, worker in another. PostgreSQL wakes
    the worker by NOTIFY; SQLite's worker polls every 100 ms."""
    await create_endpoint(client, sandbox, receiver.url("/hook"))
    worker = await start_worker(database_url, tmp_path / "worker.log")
    try:
        await wait_started(tmp_path / "worker.log")  # interpreter start-up; then the worker idles
        latencies = []
        for n in range(10):
            before = time.time()
            await create_intent(client, sandbox, f"order-{n}")
            await receiver.wait_for(n + 1, timeout=10)
            latencies.append(receiver.requests[-1].at - before)
        worker.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(worker.wait(), 20) == 0
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()
    latencies.sort()
    print(
        f"\n{database_url.split(':')[0]}: median {latencies[5] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms"
    )
    assert latencies[5] < 0.5, latencies
    assert (await counts(runtime, sandbox.application_id)) == {"SUCCEEDED": 10}
