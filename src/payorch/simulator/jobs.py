"""The simulator's background jobs: resend the notifications simulated providers could not
deliver; let the holds nobody captured lapse; forget what was made with the published (public)
test credentials after a while."""

from __future__ import annotations

from datetime import timedelta

from payorch.runtime import Runtime
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.outbox import repository as outbox
from payorch.simulator.outbox import sender
from payorch.simulator.registry import SIMULATED
from payorch.simulator.replays import forget_older_than


class DeliverSimulatorNotifications:
    name = "simulator-notifications"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        if not runtime.settings.simulator_enabled:
            return 0
        notifiers = {s.name: s.notifier for s in SIMULATED if s.notifier is not None}
        return await sender.deliver_due(runtime, runtime.phases, notifiers)


class LapseSimulatorHolds:
    """Let the simulated holds nobody captured lapse at their end, with the events the provider
    sends then (SimulatedHolds.lapse_due: provider C's charge.expired and payment_intent.canceled;
    provider A's lapse is seen when read and sends nothing)."""

    name = "simulator-holds"
    interval = 30.0

    async def run_once(self, runtime: Runtime) -> int:
        if not runtime.settings.simulator_enabled:
            return 0
        lapsed = 0
        for simulated in SIMULATED:
            if simulated.holds is not None and simulated.holds.lapse_due is not None:
                lapsed += await simulated.holds.lapse_due(runtime, runtime.phases)
        return lapsed


class PurgePublicSimulatorRows:
    """Delete what each simulated provider keeps for the public owner (SimulatedProvider.
    purge_public: A's transactions; B's preferences, payments and refunds), the answers each API
    keeps to replay (simulator/replays.py) and the outbox's notifications older than
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
            gone = await forget_older_than(conn, PUBLIC_OWNER, before)
            for simulated in SIMULATED:
                gone += await simulated.purge_public(conn, before, self.batch)
            return gone + await outbox.delete_older_than(conn, PUBLIC_OWNER, before)
