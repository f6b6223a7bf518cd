"""Recover an endpoint's failed deliveries since a time, in one call (docs/webhooks.md, Recover).

Runs in the caller's transaction (``conn``) and never commits: the HTTP endpoint and the
operator dashboard both call ``recover_deliveries``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.clock import Clock, isoformat
from payorch.errors import ResourceNotFound
from payorch.webhooks import repository
from payorch.webhooks.service import ENDPOINT


async def recover_deliveries(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    *,
    endpoint_id: str,
    since: datetime,
    include_failing: bool,
) -> int:
    """Gives every EXHAUSTED delivery of the endpoint created at or after ``since`` (and, with
    ``include_failing``, every PENDING one whose last attempt failed) a new 7-attempt schedule,
    due now (or paused while the endpoint is disabled). Returns how many.

    Idempotent: a recovered delivery has an empty schedule, so a second call matches only
    deliveries that failed again since. An attempt in flight (leased) is left alone, so a
    recover never sends a second concurrent request for one delivery."""
    application_id, now = caller.application_id, clock.now()
    endpoint = await repository.get_endpoint(conn, application_id, endpoint_id)
    if endpoint is None:
        raise ResourceNotFound(f"No webhook endpoint {endpoint_id}.")
    recovered = await repository.restart_failed(
        conn,
        application_id,
        endpoint_id,
        since=since,
        include_failing=include_failing,
        next_attempt_at=now if endpoint.enabled else None,
        now=now,
    )
    if recovered and endpoint.enabled:
        await repository.notify_workers(conn)
    logged = {"since": isoformat(since), "include_failing": include_failing, "recovered": recovered}
    await record_by(conn, clock, caller, "webhook_endpoint.recovered", (ENDPOINT, endpoint_id), logged)
    return recovered
