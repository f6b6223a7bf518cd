"""Run the jobs until SIGTERM/SIGINT; then let the batch in flight finish and exit cleanly."""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
from collections.abc import Sequence

from payorch import heap
from payorch.observability.metrics import record_job_run
from payorch.runtime import Runtime
from payorch.worker.jobs import Job, default_jobs
from payorch.worker.parent import stop_when_orphaned

log = logging.getLogger("payorch.worker")
ERROR_BACKOFF_SECONDS = 1.0


class Worker:
    def __init__(self, runtime: Runtime, jobs: Sequence[Job] | None = None) -> None:
        self.runtime = runtime
        self.jobs = list(jobs) if jobs is not None else default_jobs()
        self.stopping = asyncio.Event()
        self._wake = {job.name: asyncio.Event() for job in self.jobs}

    def wake(self, name: str) -> None:
        """Ask a job to run now (new work was committed)."""
        if name in self._wake:
            self._wake[name].set()

    def stop(self) -> None:
        self.stopping.set()
        for event in self._wake.values():
            event.set()

    async def run(self) -> None:
        log.info("worker started", extra={"jobs": [job.name for job in self.jobs]})
        # Optional hooks: start(runtime, wake) before the loops (e.g. a LISTEN connection that
        # wakes the job), drain() after them (finish the work in flight, then release).
        for job in self.jobs:
            start = getattr(job, "start", None)
            if start is not None:
                await start(self.runtime, functools.partial(self.wake, job.name))
        try:
            await asyncio.gather(*(self._loop(job) for job in self.jobs))
        finally:
            for job in self.jobs:
                drain = getattr(job, "drain", None)
                if drain is not None:
                    await drain()
        log.info("worker stopped")

    async def _loop(self, job: Job) -> None:
        wake = self._wake[job.name]
        while not self.stopping.is_set():
            wake.clear()
            try:
                done = await job.run_once(self.runtime)
            except Exception:
                log.exception("job %s failed; trying again shortly", job.name)
                record_job_run(job.name, succeeded=False)
                done = 0
                await _wait(wake, ERROR_BACKOFF_SECONDS)
                continue
            record_job_run(job.name, succeeded=True)
            if done == 0 and not self.stopping.is_set():
                await _wait(wake, job.interval)


async def _wait(event: asyncio.Event, timeout: float) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        pass


async def run_until_signalled(
    runtime: Runtime, jobs: Sequence[Job] | None = None, *, parent_pid: int | None = None
) -> None:
    """``parent_pid`` (a worker started by serve): also stop once that process is gone."""
    # Handlers first: building the jobs imports a lot, and a SIGTERM during that must still
    # mean "stop cleanly", not the default "die".
    signalled = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, signalled.set)
    helpers = []
    if parent_pid is not None:
        helpers.append(asyncio.create_task(stop_when_orphaned(parent_pid, signalled.set)))
    worker = Worker(runtime, jobs)
    heap.settle()  # start-up is done: the jobs are built

    async def relay() -> None:
        await signalled.wait()
        worker.stop()

    helpers.append(asyncio.create_task(relay()))
    try:
        await worker.run()
    finally:
        for task in helpers:
            task.cancel()
        await runtime.close()
