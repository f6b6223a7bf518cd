"""The simulator's background job: resend provider B notifications that were not delivered."""

from __future__ import annotations

from payorch.runtime import Runtime
from payorch.simulator.provider_b.notify import deliver_due


class DeliverSimulatorNotifications:
    name = "simulator-notifications"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        if not runtime.settings.simulator_enabled:
            return 0
        return await deliver_due(runtime)
