"""An endpoint failing fast (docs/webhooks.md, Endpoints that keep failing): after 32 quick
failures in a row in the first minute of its streak it is held for a growing pause, then gets one
attempt in flight at a time until a 2xx gives it its full cap back; its held deliveries keep
their schedule and are attempted later; another application's endpoint is not slowed by it.
SQLite and PostgreSQL, through HTTP and the worker."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from itertools import pairwise

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from payorch.worker.runner import Worker
from tests.kit import new_application
from tests.webhooks.helpers import BASE, Hooks, backlog, create_endpoint, create_intent, deliveries_of
from tests.webhooks.receiver import Receiver

DEAD = "/status/500"  # answers at once: a quick failure


pytestmark = pytest.mark.settings(webhook_retry_schedule="1,1,1,1,1,1")


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_an_endpoint_failing_fast_gets_one_attempt_at_a_time_until_a_2xx(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url(DEAD))
    await backlog(client, runtime, sandbox, endpoint_id, 80)
    assert await deliveries.run_until_idle(runtime) == 32  # the cap at once, all fail: held
    clock.advance(0.9)
    assert await deliveries.run_once(runtime) == 0  # 48 due, held for 1 s
    clock.advance(0.1)
    assert await deliveries.run_once(runtime) == 1  # then one attempt in flight at a time
    assert await deliveries.run_once(runtime) == 0
    await deliveries.settle()
    # Each failure holds it for as long as it has been failing: 1 s, then 2 s...
    clock.advance(1)
    assert await deliveries.run_until_idle(runtime) == 1
    clock.advance(1.9)
    assert await deliveries.run_until_idle(runtime) == 0
    clock.advance(0.1)
    assert await deliveries.run_once(runtime) == 1
    assert await deliveries.run_once(runtime) == 0
    await deliveries.settle()
    assert len(receiver.at(DEAD)) == 35

    # Fixed: the next attempt gets a 2xx and the endpoint has its full cap again.
    patch = {"url": receiver.url("/fixed")}
    await client.patch(f"{BASE}/{endpoint_id}", json=patch, headers=sandbox.headers)
    clock.advance(4)
    assert await deliveries.run_once(runtime) == 1
    await deliveries.settle()
    assert await deliveries.run_once(runtime) == 32
    await deliveries.settle()
    assert len(receiver.at("/fixed")) == 33


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_held_deliveries_keep_their_schedule_and_are_all_attempted_later(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url(DEAD))
    await backlog(client, runtime, sandbox, endpoint_id, 40)
    for _ in range(60):  # its first minute, a second at a time (every retry due after 1 s)
        await deliveries.run_until_idle(runtime)
        clock.advance(1)
    # 32 at once, then one attempt after each hold (1, 1, 2, 4, 8, 16 s) instead of 40 x 7.
    assert len(receiver.at(DEAD)) == 32 + 6
    listed = await deliveries_of(client, sandbox, endpoint_id)
    assert len(listed) == 40 and all(d["status"] == "PENDING" for d in listed)

    await client.patch(f"{BASE}/{endpoint_id}", json={"url": receiver.url("/fixed")}, headers=sandbox.headers)
    for _ in range(3):  # past the breaker's 30 s (it took over after the minute)
        clock.advance(30)
        await deliveries.run_until_idle(runtime)
    listed = await deliveries_of(client, sandbox, endpoint_id)
    assert [d["status"] for d in listed] == ["SUCCEEDED"] * 40  # nothing dropped or exhausted
    assert len(receiver.at("/fixed")) == 40
    for delivery in listed:  # never two attempts closer than the schedule's 1 s
        detail = await client.get(
            f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers
        )
        times = [datetime.fromisoformat(a["at"]) for a in detail.json()["attempt_history"]]
        assert 1 <= len(times) <= 7
        assert all((b - a).total_seconds() >= 1 for a, b in pairwise(times)), times


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_a_healthy_endpoint_is_served_while_a_dead_ones_backlog_waits(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    dead_app = await new_application(runtime)
    dead_id, _ = await create_endpoint(client, dead_app, receiver.url(DEAD))
    await backlog(client, runtime, dead_app, dead_id, 2000)
    app = await new_application(runtime)
    healthy, _ = await create_endpoint(client, app, receiver.url("/a"))

    latencies: list[float] = []  # commit -> arrival of the healthy endpoint's notices
    worker = Worker(runtime, [WebhookDeliveries()])
    running = asyncio.create_task(worker.run())
    try:
        await receiver.wait_for(32, path=DEAD)  # the dead endpoint's first round
        for n in range(20):
            await create_intent(client, app, f"a-{n}")
            committed = time.time()
            await receiver.wait_for(n + 1, path="/a", timeout=10)
            latencies.append(receiver.at("/a")[-1].at - committed)
            await asyncio.sleep(0.05)
        dead_attempts = len(receiver.at(DEAD))
    finally:
        worker.stop()
        await running
    assert [d["status"] for d in await deliveries_of(client, app, healthy)] == ["SUCCEEDED"] * 20
    assert max(latencies) < 1.0, latencies
    # The dead endpoint got its first round(s) and was then held (the clock is frozen): its
    # backlog waits, PENDING, instead of 2,000 quick failures competing with the healthy one.
    print(f"\ndead endpoint: {dead_attempts} attempts; healthy: max {max(latencies):.3f} s")
    assert dead_attempts <= 32 + 8, dead_attempts
    exhausted = await client.get(
        f"{BASE}/{dead_id}/deliveries", params={"status": "EXHAUSTED"}, headers=dead_app.headers
    )
    assert exhausted.status_code == 200 and exhausted.json()["items"] == []
