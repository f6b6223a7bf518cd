"""One tenant cannot slow another's webhooks: the worker's attempts are shared between
applications (a cap per application as well as per endpoint), and an endpoint whose attempts
time out is tried one at a time until it answers; SQLite and PostgreSQL.

The job runs as `payorch worker` runs it (runner.Worker, caps from the settings); the clock is
frozen, so a failed attempt's retry (60 s later) never becomes due during a test."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from payorch.worker.runner import Worker
from tests.kit import new_application
from tests.webhooks.helpers import BASE, create_endpoint, create_intent, deliveries_of
from tests.webhooks.receiver import Receiver

TIMEOUT = 1.5  # PAYORCH_WEBHOOK_TIMEOUT_SECONDS; the dead endpoints answer after 30 s
DEAD = "/sleep/30"
# Back up: answers 200 after 0.5 s (well within TIMEOUT), so attempts sent together overlap at
# the receiver, which counts how many it answers at once.
BACK = "/late/0.5/200"
A_EVENTS, A_SPACING = 30, 0.15  # A's events spread over three of B's timeout rounds


pytestmark = pytest.mark.settings(webhook_timeout_seconds=TIMEOUT)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_dead_endpoints_of_one_application_do_not_delay_another(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    b = await new_application(runtime)
    for _ in range(16):  # PAYORCH_MAX_WEBHOOK_ENDPOINTS' default, the most B may have
        await create_endpoint(client, b, receiver.url(DEAD))
    for n in range(60):  # 960 deliveries queued for B before the worker starts
        await create_intent(client, b, f"b-{n}")
    a = await new_application(runtime)
    healthy, _ = await create_endpoint(client, a, receiver.url("/a"))

    worker = Worker(runtime, [WebhookDeliveries()])
    running = asyncio.create_task(worker.run())
    latencies: list[float] = []
    try:
        # B's attempts hold the worker; the worker claims them in passes, slower on a loaded machine.
        await receiver.wait_for(100, path=DEAD, timeout=60)
        start = time.monotonic()
        for n in range(A_EVENTS):
            # Pacing of the load only (no outcome is awaited here): event n at n x A_SPACING.
            await asyncio.sleep(max(0.0, start + n * A_SPACING - time.monotonic()))
            await create_intent(client, a, f"a-{n}")
            committed = time.time()  # the intent's transaction commits before the answer
            await receiver.wait_for(n + 1, path="/a", timeout=30)
            latencies.append(receiver.at("/a")[-1].at - committed)
        still_dead = len(receiver.at(DEAD))
    finally:
        worker.stop()
        await running
    print(f"\nA: p50 {percentile(latencies, 50):.3f} s, p99 {percentile(latencies, 99):.3f} s")
    print(f"B: {still_dead} attempts started by the time A's last event was delivered")
    assert percentile(latencies, 99) < 1.0, latencies
    assert [d["status"] for d in await deliveries_of(client, a, healthy)] == ["SUCCEEDED"] * 30
    # B was not starved either: its backlog kept being attempted after its first round timed out.
    assert still_dead > 128


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_an_endpoint_that_times_out_is_tried_one_at_a_time_until_it_answers(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    app = await new_application(runtime)
    endpoint_id, _ = await create_endpoint(client, app, receiver.url(DEAD))
    for n in range(45):
        await create_intent(client, app, f"order-{n}")

    worker = Worker(runtime, [WebhookDeliveries()])
    running = asyncio.create_task(worker.run())
    try:
        # First claim: the per-endpoint cap (32) at once; all of them time out together.
        await receiver.wait_for(32, path=DEAD)
        await receiver.wait_for(35, path=DEAD, timeout=60)  # bounds a hang only
        arrivals = [r.at for r in receiver.at(DEAD)]
        # Since then: one attempt at a time, each started when the previous one timed out.
        later = arrivals[32:]
        assert all(b - a > TIMEOUT * 0.8 for a, b in zip(later, later[1:], strict=False)), later
        assert arrivals[32] - arrivals[31] > TIMEOUT * 0.8

        # The endpoint answers again: once one attempt succeeds, the cap is back to 32.
        response = await client.patch(
            f"{BASE}/{endpoint_id}", json={"url": receiver.url(BACK)}, headers=app.headers
        )
        assert response.status_code == 200, response.text
        await receiver.wait_for(45, timeout=60)  # every delivery attempted once (bounds a hang)
    finally:
        worker.stop()
        await running
    # The attempt in flight to the old URL times out; the next one succeeds and the rest go
    # out together: the receiver answered several at once (one at a time, never more than one).
    assert receiver.most_at_once[BACK] > 1, receiver.most_at_once
    items = await deliveries_of(client, app, endpoint_id)
    assert sum(d["status"] == "SUCCEEDED" for d in items) == len(receiver.at(BACK)) >= 8


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize(
    "settings_overrides",
    [{"webhook_timeout_seconds": TIMEOUT, "webhook_max_in_flight_per_application": 4}],
)
async def test_an_application_has_at_most_its_cap_of_attempts_in_flight(
    client: httpx.AsyncClient, runtime: Runtime, receiver: Receiver
) -> None:
    app = await new_application(runtime)
    for _ in range(3):  # slow but healthy: answers 200 after 1 s, within the timeout
        await create_endpoint(client, app, receiver.url("/sleep/1"))
    for n in range(4):
        await create_intent(client, app, f"order-{n}")

    worker = Worker(runtime, [WebhookDeliveries()])
    running = asyncio.create_task(worker.run())
    try:
        await receiver.wait_for(12, timeout=10)
    finally:
        worker.stop()
        await running
    arrivals = sorted(r.at for r in receiver.requests)
    # PAYORCH_WEBHOOK_MAX_IN_FLIGHT_PER_APPLICATION = 4: a fifth attempt starts only once one
    # of the four before it has been answered (1 s later).
    assert all(arrivals[i + 4] - arrivals[i] > 0.9 for i in range(len(arrivals) - 4)), arrivals
