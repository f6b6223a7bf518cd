"""The worker's sweep of payment links past their expiry (payorch.links.settle)."""

from __future__ import annotations

from payorch.links.settle import sweep
from payorch.runtime import Runtime


class ExpireLinks:
    """The worker's job: ACTIVE links past their expires_at become EXPIRED, with their event
    (a link is also settled whenever it is read or its page opened, so this only makes the
    event timely for links nobody looks at)."""

    name = "payment-links-expiry"
    interval = 30.0

    async def run_once(self, runtime: Runtime) -> int:
        async with runtime.phases.transaction() as conn:
            return await sweep(conn, runtime.clock)
