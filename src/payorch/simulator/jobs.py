"""The simulator's background jobs: resend provider B notifications that were not delivered;
forget what was made with the published (public) test credentials after a while."""

from __future__ import annotations

from datetime import timedelta

from payorch.runtime import Runtime
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.provider_a import repository as provider_a
from payorch.simulator.provider_b import repository as provider_b
from payorch.simulator.provider_b.notify import deliver_due


class DeliverSimulatorNotifications:
    name = "simulator-notifications"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        if not runtime.settings.simulator_enabled:
            return 0
        return await deliver_due(runtime, runtime.phases)


class PurgePublicSimulatorRows:
    """Delete the public owner's provider A transactions and provider B preferences, payments,
    refunds and notifications older than
    PAYORCH_SIMULATOR_PUBLIC_RETENTION_SECONDS: anyone may write them, so they must not pile up.
    Applications' own (MOCK) rows are never touched. Runs even with the simulator disabled, so
    rows left from when it was on still go."""

    name = "simulator-public-purge"
    interval = 300.0
    batch = 1000

    async def run_once(self, runtime: Runtime) -> int:
        retention = timedelta(seconds=runtime.settings.simulator_public_retention_seconds)
        before = runtime.clock.now() - retention
        async with runtime.phases.transaction() as conn:
            gone = await provider_a.delete_older_than(conn, PUBLIC_OWNER, before, self.batch)
            return gone + await provider_b.delete_older_than(conn, PUBLIC_OWNER, before)
