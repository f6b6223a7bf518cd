"""The jobs a worker runs. Each is a small class with a name, an idle interval and run_once.

``run_once`` does one batch and returns how much it did: a positive number means "there may be
more, call again at once"; zero means "idle, wait up to ``interval`` or until woken".
"""

from __future__ import annotations

from typing import Protocol

from payorch.runtime import Runtime
from payorch.worker.refunds import ResolvePendingRefunds


class Job(Protocol):
    name: str
    interval: float

    async def run_once(self, runtime: Runtime) -> int: ...


class PurgeIdempotencyRecords:
    """Forget Idempotency-Keys older than PAYORCH_IDEMPOTENCY_TTL_SECONDS."""

    name = "purge-idempotency"
    interval = 60.0

    async def run_once(self, runtime: Runtime) -> int:
        return await runtime.idempotency.purge()


def default_jobs() -> list[Job]:
    from payorch.simulator.jobs import DeliverSimulatorNotifications, PurgePublicSimulatorRows
    from payorch.worker.deliveries import WebhookDeliveries
    from payorch.worker.expiry import ExpireCheckouts
    from payorch.worker.reconciliation import ReconcileProcessing

    return [
        PurgeIdempotencyRecords(),
        WebhookDeliveries(),
        ExpireCheckouts(),
        ReconcileProcessing(),
        DeliverSimulatorNotifications(),  # resends provider B notifications (no-op when disabled)
        PurgePublicSimulatorRows(),  # rows made with provider A's published keys, after a day
        ResolvePendingRefunds(),
    ]
