"""A worker job's runs are exported: the time of its last successful run, and its failures
(payorch_worker_job_last_success_timestamp_seconds, payorch_worker_job_failures_total)."""

from __future__ import annotations

import asyncio
import time

from prometheus_client import REGISTRY

from payorch.runtime import Runtime
from payorch.worker.runner import Worker


class Succeeds:
    name = "test-succeeds"
    interval = 0.01

    async def run_once(self, runtime: Runtime) -> int:
        return 0


class Fails:
    name = "test-fails"
    interval = 0.01

    async def run_once(self, runtime: Runtime) -> int:
        raise RuntimeError("planted")


def sample(name: str, job: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"worker_job": job})


async def test_a_job_run_sets_its_last_success_and_a_failing_run_counts(runtime: Runtime) -> None:
    failures_before = sample("payorch_worker_job_failures_total", "test-fails") or 0.0
    started = time.time()
    worker = Worker(runtime, [Succeeds(), Fails()])
    running = asyncio.create_task(worker.run())

    def both_ran() -> bool:  # the condition itself, not a fixed 0.2 s a loaded machine may miss
        last = sample("payorch_worker_job_last_success_timestamp_seconds", "test-succeeds")
        failures = sample("payorch_worker_job_failures_total", "test-fails") or 0.0
        return last is not None and last >= started and failures >= failures_before + 1

    for _ in range(300):  # up to 30 s
        if both_ran():
            break
        await asyncio.sleep(0.1)
    worker.stop()
    await asyncio.wait_for(running, 5)

    last = sample("payorch_worker_job_last_success_timestamp_seconds", "test-succeeds")
    assert last is not None and started <= last <= time.time()
    assert sample("payorch_worker_job_last_success_timestamp_seconds", "test-fails") is None
    assert (sample("payorch_worker_job_failures_total", "test-fails") or 0.0) >= failures_before + 1
    assert sample("payorch_worker_job_failures_total", "test-succeeds") is None
