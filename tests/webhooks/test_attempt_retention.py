"""Retention of delivery attempts, through the worker: attempts older than
PAYORCH_WEBHOOK_ATTEMPT_RETENTION_DAYS go oldest first in bounded batches, recent ones stay, a
delivery keeps its summary, and a purge in progress does not block writers (PostgreSQL)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from payorch.webhooks.retention import purge_attempts
from payorch.worker.jobs import PurgeWebhookAttempts, default_jobs
from payorch.worker.runner import Worker
from tests.kit import Sandbox
from tests.webhooks.helpers import BASE, Hooks, create_endpoint, create_intent, deliveries_of

DAY = timedelta(days=1)


pytestmark = pytest.mark.settings(webhook_retry_schedule="1,1,1,1,1,1", webhook_timeout_seconds=5.0)


@dataclass(frozen=True)
class Failing:
    """What each test drives: an endpoint answering 500, and the worker's delivery job."""

    client: httpx.AsyncClient
    sandbox: Sandbox
    runtime: Runtime
    clock: FrozenClock
    deliveries: WebhookDeliveries
    endpoint_id: str

    def unpack(
        self,
    ) -> tuple[httpx.AsyncClient, Sandbox, Runtime, FrozenClock, WebhookDeliveries]:
        return self.client, self.sandbox, self.runtime, self.clock, self.deliveries


@pytest.fixture
async def failing(hooks: Hooks) -> Failing:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url("/status/500"))
    return Failing(client, sandbox, runtime, clock, deliveries, endpoint_id)


async def history(
    client: httpx.AsyncClient, sandbox: Sandbox, endpoint_id: str, delivery_id: str
) -> list[int]:
    detail = await client.get(f"{BASE}/{endpoint_id}/deliveries/{delivery_id}", headers=sandbox.headers)
    assert detail.status_code == 200, detail.text
    return [attempt["number"] for attempt in detail.json()["attempt_history"]]


class StopWhenIdle(PurgeWebhookAttempts):
    """The real job; stops its worker the first time it finds nothing to purge."""

    def __init__(self, batch: int = 1000) -> None:
        super().__init__(batch)
        self.worker: Worker | None = None
        self.calls: list[int] = []

    async def run_once(self, runtime: Runtime) -> int:
        done = await super().run_once(runtime)
        self.calls.append(done)
        if done == 0 and self.worker is not None:
            self.worker.stop()
        return done


async def purge_through_worker(runtime: Runtime, batch: int = 1000) -> list[int]:
    """Run a worker with the purge job until the job is idle; answer each call's count."""
    job = StopWhenIdle(batch)
    job.worker = Worker(runtime, [job])
    await asyncio.wait_for(job.worker.run(), 30)
    return job.calls


async def test_old_attempts_go_recent_ones_stay_and_the_delivery_keeps_its_summary(
    failing: Failing,
) -> None:
    client, sandbox, runtime, clock, deliveries = failing.unpack()
    endpoint_id = failing.endpoint_id
    assert "webhook-attempts-purge" in [job.name for job in default_jobs()]
    assert runtime.settings.webhook_attempt_retention_days == 30  # the documented default
    await create_intent(client, sandbox, "old")
    for _ in range(3):  # attempts 1-3 of the first delivery, today
        assert await deliveries.run_until_idle(runtime) == 1
        clock.advance(1)
    clock.advance(20 * 86400)
    await create_intent(client, sandbox, "recent")
    assert await deliveries.run_until_idle(runtime) == 2  # attempt 4 of the first, 1 of the second
    [second, first] = await deliveries_of(client, sandbox, endpoint_id)  # newest first
    assert await history(client, sandbox, endpoint_id, first["id"]) == [1, 2, 3, 4]

    clock.advance(11 * 86400)  # attempts 1-3 are now 31 days old, the others 11
    assert await purge_through_worker(runtime, batch=2) == [2, 1, 0]
    assert await history(client, sandbox, endpoint_id, first["id"]) == [4]
    assert await history(client, sandbox, endpoint_id, second["id"]) == [1]
    [second_after, first_after] = await deliveries_of(client, sandbox, endpoint_id)
    assert first_after == first and second_after == second  # the summary is untouched

    clock.advance(30 * 86400)  # now every attempt is past retention
    assert await purge_through_worker(runtime) == [2, 0]
    assert await history(client, sandbox, endpoint_id, first["id"]) == []
    assert await history(client, sandbox, endpoint_id, second["id"]) == []
    [second_after, first_after] = await deliveries_of(client, sandbox, endpoint_id)
    assert first_after["attempts"] == 4 and first_after["status"] == "PENDING"
    assert first_after["last_attempt_at"] == first["last_attempt_at"]
    assert second_after["attempts"] == 1 and second_after["response_status"] == 500


async def test_batches_are_bounded_and_oldest_first(
    failing: Failing,
) -> None:
    client, sandbox, runtime, clock, deliveries = failing.unpack()
    endpoint_id = failing.endpoint_id
    await create_intent(client, sandbox)
    for _ in range(7):  # the whole schedule: EXHAUSTED after 7 attempts
        assert await deliveries.run_until_idle(runtime) == 1
        clock.advance(1)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "EXHAUSTED"
    clock.advance(30 * 86400 - 4)  # attempts 1-3 are past 30 days, 4-7 not yet
    job = PurgeWebhookAttempts(batch=2)
    assert await job.run_once(runtime) == 2
    assert await history(client, sandbox, endpoint_id, delivery["id"]) == [3, 4, 5, 6, 7]
    assert await job.run_once(runtime) == 1
    assert await job.run_once(runtime) == 0
    assert await history(client, sandbox, endpoint_id, delivery["id"]) == [4, 5, 6, 7]
    clock.advance(10)
    done = [await job.run_once(runtime) for _ in range(3)]
    assert done == [2, 2, 0]
    assert await history(client, sandbox, endpoint_id, delivery["id"]) == []


async def test_a_purge_in_progress_does_not_block_writers(
    failing: Failing,
) -> None:
    client, sandbox, runtime, clock, deliveries = failing.unpack()
    endpoint_id = failing.endpoint_id
    if runtime.database.is_sqlite:
        pytest.skip("SQLite has one writer: a purge batch is a short transaction between writes")
    await create_intent(client, sandbox, "old")
    assert await deliveries.run_until_idle(runtime) == 1
    clock.advance(31 * 86400)
    [old] = await deliveries_of(client, sandbox, endpoint_id)
    async with runtime.database.transaction() as conn:  # a purge batch, left open
        assert (await purge_attempts(conn, started_before=clock.now() - 30 * DAY))[0] == 1
        # Meanwhile: a create (event, fan-out) and an attempt recorded on the same delivery.
        await asyncio.wait_for(create_intent(client, sandbox, "new"), 5)
        await asyncio.wait_for(deliveries.run_until_idle(runtime), 10)
    assert await history(client, sandbox, endpoint_id, old["id"]) == [2]
    listed = await deliveries_of(client, sandbox, endpoint_id)
    assert sorted(d["attempts"] for d in listed) == [1, 2]
