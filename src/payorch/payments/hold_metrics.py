"""Holds about to lapse, and holds past their deadline, read from the database when /metrics is
scraped (payorch_holds_about_to_lapse, payorch_holds_past_deadline; the alerts
PayorchHoldsAboutToLapse and PayorchHoldsPastDeadline in deploy/prometheus). Any API replica
answers it: the holds are shared by every worker. One range query on (status, capture_before)."""

from __future__ import annotations

from datetime import timedelta

from payorch.db import Phases
from payorch.observability import metrics
from payorch.payments import lapse_repository
from payorch.providers.registry import REGISTRATIONS


async def refresh_holds_due(runtime: metrics.ScrapeSource) -> None:
    now = runtime.clock.now()
    due_by = now + timedelta(seconds=runtime.settings.hold_capture_due_seconds)
    async with Phases(runtime.database).reading() as conn:
        found = await lapse_repository.counts(conn, now, due_by)
    # Every provider that can hold gets its series, 0 when none is due (an alert's quiet case).
    every = {r.provider_id: (0, 0) for r in REGISTRATIONS if r.holds is not None}
    metrics.set_holds_due({**every, **found})
