"""Resolve refunds whose provider answer is unknown (timeout, 5xx, a crash mid-call).

Claims due PENDING refunds (FOR UPDATE SKIP LOCKED on PostgreSQL, so several workers share the
work), leases them, and asks the provider what became of each before ever sending it again
(payments/refunds.py ``resolve``).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from payorch.payments import refunds
from payorch.payments.repository import claim_due_refunds
from payorch.runtime import Runtime

log = logging.getLogger("payorch.worker.refunds")  # the name operators know
BATCH = 20


class ResolvePendingRefunds:
    name = "resolve-refunds"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        phases = runtime.phases
        now = runtime.clock.now()
        # Lease long enough for a lookup and a resend; a dead worker's claims come back after it.
        lease = now + timedelta(seconds=2 * runtime.settings.provider_timeout_seconds + 30)
        async with phases.transaction() as conn:
            ids = await claim_due_refunds(conn, now, lease, BATCH)
        for refund_id in ids:
            try:
                status = await refunds.resolve(phases, runtime, refund_id)
            except Exception:
                log.exception("could not resolve refund", extra={"refund_id": refund_id})
                continue
            log.info("refund checked", extra={"refund_id": refund_id, "status": status})
        return len(ids)
