"""Two `payorch worker` processes on one PostgreSQL and a slow receiver: the per-endpoint cap
holds across both processes (not 2 x the cap), and an `ordered` endpoint gets one intent's
notices one after the other, in order; an endpoint failing fast is backed off by both, and an
endpoint held to one attempt at a time (its breaker's probe) gets one across both."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import orjson
import pytest

from payorch.runtime import Runtime
from tests.kit import Sandbox
from tests.webhooks.helpers import (
    CREATED,
    backlog,
    counts,
    create_endpoint,
    create_intent,
    probed_endpoint,
    start_worker,
    wait_started,
)
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.slow

CAP = 3
SLOW = "/sleep/0.4"


@pytest.fixture(autouse=True)
def _postgresql_only(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("several worker processes share one PostgreSQL; not SQLite")


@contextlib.asynccontextmanager
async def two_workers(
    database_url: str, tmp_path: Path, settings: dict[str, str] | None = None
) -> AsyncIterator[None]:
    """Two `payorch worker` processes on ``database_url``, started (their logs say so) when the
    block begins and stopped (SIGTERM, waited for) when it ends."""
    logs = [tmp_path / f"worker-{n}.log" for n in range(2)]
    workers = [await start_worker(database_url, log, settings) for log in logs]
    try:
        for log in logs:
            await wait_started(log)
        yield
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            await worker.wait()


@pytest.mark.slow
@pytest.mark.postgres
async def test_two_workers_share_the_per_endpoint_cap_with_a_slow_receiver(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    database_url: str,
    tmp_path: Path,
) -> None:
    await create_endpoint(client, sandbox, receiver.url(SLOW))
    events = 24
    for n in range(events):  # a backlog first: both workers find it at once
        await create_intent(client, sandbox, f"order-{n}")
    settings = {"PAYORCH_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT": str(CAP)}
    async with two_workers(database_url, tmp_path, settings):
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            state = await counts(runtime, sandbox.application_id)
            if state.get("SUCCEEDED", 0) == events:
                break
            await asyncio.sleep(0.2)
        assert state == {"SUCCEEDED": events}, state
    # Per process alone, two workers would have sent 2 x CAP at once.
    print(f"\nmost requests at once to the slow endpoint: {receiver.most_at_once[SLOW]}")
    assert receiver.most_at_once[SLOW] <= CAP
    assert len(receiver.at(SLOW)) == events


@pytest.mark.slow
@pytest.mark.postgres
async def test_two_workers_keep_an_ordered_endpoints_notices_in_order(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    database_url: str,
    tmp_path: Path,
) -> None:
    response = await client.post(
        "/v1/admin/webhook-endpoints",
        json={"url": receiver.url(SLOW), "ordered": True},
        headers=sandbox.headers,
    )
    assert response.status_code == 201, response.text
    CREATED.append(response.json()["data"]["id"])
    intents = []
    for n in range(8):  # a backlog: each intent's creation and cancellation both due at once
        intent_id = await create_intent(client, sandbox, f"ordered-{n}")
        cancel = await client.post(
            f"/v1/payment-intents/{intent_id}/cancel",
            headers={**sandbox.headers, "Idempotency-Key": f"cancel-{n}"},
        )
        assert cancel.status_code == 200, cancel.text
        intents.append(intent_id)
    async with two_workers(database_url, tmp_path):
        await receiver.wait_for(2 * len(intents), timeout=90, path=SLOW)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if await counts(runtime, sandbox.application_id) == {"SUCCEEDED": 2 * len(intents)}:
                break
            await asyncio.sleep(0.2)
    assert await counts(runtime, sandbox.application_id) == {"SUCCEEDED": 2 * len(intents)}
    assert receiver.most_at_once[SLOW] >= 2  # intents were delivered side by side...
    for intent_id in intents:
        [creation, cancellation] = [
            orjson.loads(r.body) | {"at": r.at} for r in receiver.at(SLOW) if intent_id in r.body.decode()
        ]
        # ...but each intent's cancellation only after its creation notice was answered.
        assert creation["type"] == "payment_intent.created"
        assert cancellation["type"] == "payment.cancelled"
        assert cancellation["at"] - creation["at"] >= 0.4 - 0.05


@pytest.mark.slow
@pytest.mark.postgres
async def test_two_workers_back_off_an_endpoint_failing_fast_together(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, receiver: Receiver,
    database_url: str, tmp_path: Path,
) -> None:  # fmt: skip
    dead_id, _ = await create_endpoint(client, sandbox, receiver.url("/status/500"))
    await backlog(client, runtime, sandbox, dead_id, 1000)  # all due, the retries 60 s later
    async with two_workers(database_url, tmp_path):
        await receiver.wait_for(32, path="/status/500")
        await asyncio.sleep(3.5)  # the holds: 1 s, 1 s, 2 s
    # The first round(s) of quick failures, then about one attempt per hold; without the
    # backoff both workers would have failed all 1,000 at once, 32 at a time.
    attempts = len(receiver.at("/status/500"))
    print(f"\nattempts to the endpoint failing fast in its first seconds: {attempts}")
    assert attempts <= 2 * 32 + 8, attempts
    assert (await counts(runtime, sandbox.application_id)).get("PENDING") == 1000


@pytest.mark.slow
@pytest.mark.postgres
async def test_two_workers_probe_a_held_endpoint_one_attempt_at_a_time(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, receiver: Receiver,
    database_url: str, tmp_path: Path,
) -> None:  # fmt: skip
    # Each attempt in flight for 1.5 s, then a failure. Under the workers' 2 s timeout, so every
    # attempt is answered and the receiver's count is the attempts in flight (an attempt given up
    # at the timeout would still be counted by the receiver while a later one arrived).
    late_failure = "/late/1.5/500"
    # A breaker whose hold just ended: probed.
    await probed_endpoint(client, sandbox, runtime, receiver.url(late_failure), deliveries=50)
    async with two_workers(database_url, tmp_path):
        await receiver.wait_for(1, path=late_failure)
        await asyncio.sleep(5)  # the probe fails at 1.5 s; its result holds the endpoint again
    # Each worker alone would have sent its own probe: two at once.
    assert receiver.most_at_once[late_failure] == 1
    # The failed probe holds the endpoint again (30 s): no second probe, even from the worker
    # that listed the endpoint as due while the first probe's result was being recorded
    # (queue.lock_endpoints reads the hold again under the lock; test_claim_holds.py).
    assert len(receiver.at(late_failure)) == 1
    assert (await counts(runtime, sandbox.application_id)).get("PENDING") == 50
