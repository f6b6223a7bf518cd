"""Reconciliation: PROCESSING intents (payment in process, or a commit whose outcome is unknown)
are settled by reading the provider's status on a backoff schedule (transitions.RECONCILE_BACKOFF)
until it is final, or until the provider no longer answers about it (provider A: 7 days after
create), when it stops asking. Several workers may run: claims use leases (FOR UPDATE SKIP LOCKED on PG)."""

from __future__ import annotations

from payorch.checkouts.expiry_job import check_due
from payorch.intents.states import IntentStatus
from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentResult
from payorch.providers.registry import get_adapter
from payorch.runtime import Runtime


async def _read(ctx: ConnectorContext, ref: CheckoutRef) -> PaymentResult:
    return await get_adapter(ctx.provider).read_status(ctx, ref)


class ReconcileProcessing:
    name = "reconciliation"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        phases = runtime.phases
        return await check_due(
            runtime, phases, (IntentStatus.PROCESSING.value,), _read, within_status_lifetime=True
        )
