"""The worker's reconciliation job (scheduled by worker/jobs.py): queue yesterday's run for each
application once a day, and carry out the runs asked for (API, dashboard), one at a time."""

from __future__ import annotations

from payorch.reconciliation import service
from payorch.runtime import Runtime


class ReconcileDays:
    name = "reconciliation-report"
    interval = 30.0

    async def run_once(self, runtime: Runtime) -> int:
        async with runtime.phases.transaction() as conn:
            await service.queue_daily(conn, runtime.clock)
        return await service.run_due(runtime)
