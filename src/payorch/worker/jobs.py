"""The jobs a worker runs. Each is a small class with a name, an idle interval and run_once.

``run_once`` does one batch and returns how much it did: a positive number means "there may be
more, call again at once"; zero means "idle, wait up to ``interval`` or until woken".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol

from payorch.payments.hold_job import SettleHoldActions
from payorch.payments.lapse_job import HoldDeadlines
from payorch.payments.resolve_refunds import ResolvePendingRefunds
from payorch.runtime import Runtime
from payorch.webhooks.retention import DEFAULT_BATCH, purge_attempts


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


class PurgeWebhookAttempts:
    """Delete webhook delivery attempts older than PAYORCH_WEBHOOK_ATTEMPT_RETENTION_DAYS, one
    bounded batch per call (webhooks/retention.py)."""

    name = "webhook-attempts-purge"
    interval = 60.0

    def __init__(self, batch: int = DEFAULT_BATCH) -> None:
        self.batch = batch
        self._after = 0  # where the next batch starts; from the start again once idle

    async def run_once(self, runtime: Runtime) -> int:
        days = runtime.settings.webhook_attempt_retention_days
        cutoff = runtime.clock.now() - timedelta(days=days)
        async with runtime.phases.transaction() as conn:
            done, self._after = await purge_attempts(
                conn, started_before=cutoff, batch=self.batch, after=self._after
            )
        if done == 0:
            self._after = 0  # idle: the next run looks from the start (a late-committed row)
        return done


def default_jobs() -> list[Job]:
    from payorch.activity.retention import ApplyActivityRetention
    from payorch.checkouts.expiry_job import ExpireCheckouts
    from payorch.checkouts.reconcile_processing import ReconcileProcessing
    from payorch.links.expiry_job import ExpireLinks
    from payorch.reconciliation.job import ReconcileDays
    from payorch.simulator.jobs import (
        DeliverSimulatorNotifications,
        LapseSimulatorHolds,
        PurgePublicSimulatorRows,
    )
    from payorch.webhooks.delivery_engine import WebhookDeliveries

    return [
        PurgeIdempotencyRecords(),
        PurgeWebhookAttempts(),
        WebhookDeliveries(),
        ExpireCheckouts(),
        ReconcileProcessing(),
        DeliverSimulatorNotifications(),  # resends provider B notifications (no-op when disabled)
        LapseSimulatorHolds(),  # simulated holds nobody captured lapse (no-op when disabled)
        PurgePublicSimulatorRows(),  # rows made with provider A's published keys, after a day
        ResolvePendingRefunds(),
        SettleHoldActions(),
        HoldDeadlines(),  # payment.capture_due, then each uncaptured hold's end (payments/lapse_job.py)
        ReconcileDays(),  # daily and asked-for reconciliation reports (reconciliation/job.py)
        ApplyActivityRetention(),  # activity log entries past retention (activity/retention.py)
        ExpireLinks(),  # payment links past their expires_at (links/expiry_job.py)
    ]
