"""Automatic disabling, the delivery engine's side: after recording a batch of attempts, in the same
transaction, disable the endpoints whose failure streak passed the limits (webhooks/health.py)
and tell each one's application with a ``webhook_endpoint.disabled`` event (sent to its other
enabled endpoints, as every event is)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import service as activity
from payorch.activity.records import Actor, Change
from payorch.clock import isoformat
from payorch.events import service as events
from payorch.events.catalogue import WebhookEndpointDisabled
from payorch.jsontypes import JsonObject
from payorch.runtime import Runtime
from payorch.webhooks import health
from payorch.webhooks.records import AUTO_DISABLED, RecordedAttempt
from payorch.webhooks.service import ENDPOINT

log = logging.getLogger("payorch.worker.deliveries")  # the engine's logger (delivery_engine.py)
DELIVERIES = Actor("system", "webhook_deliveries")  # the delivery engine, as the activity log names it


async def disable_failing_endpoints(
    conn: AsyncConnection,
    runtime: Runtime,
    endpoint_of: dict[str, str],
    recorded: list[RecordedAttempt],
    *,
    now: datetime,
    streak_open: set[str],
) -> None:
    """Disables the endpoints whose failure streak passed the limits (webhooks/health.py) and
    tells each one's application, in the results' transaction."""
    settings = runtime.settings
    disabled = await health.record_streaks(
        conn,
        [(endpoint_of[r.attempt.delivery_id], r) for r in recorded],
        now=now,
        disable_after=timedelta(seconds=settings.webhook_disable_after_seconds),
        min_attempts=settings.webhook_disable_after_attempts,
        breaker=health.Breaker(
            settings.webhook_breaker_failures, timedelta(seconds=settings.webhook_breaker_seconds)
        ),
        streak_open=streak_open,
    )
    for endpoint in disabled:
        log.warning(
            "webhook endpoint %s disabled: every attempt failed since %s",
            endpoint.id,
            endpoint.failing_since.isoformat(),
        )
        disabled_event = WebhookEndpointDisabled(
            webhook_endpoint_id=endpoint.id,
            url=endpoint.url,
            reason=AUTO_DISABLED,
            failing_since=isoformat(endpoint.failing_since),
            failed_attempts=endpoint.failed_attempts,
        )
        await events.emit_payload(
            conn, application_id=endpoint.application_id, payload=disabled_event, at=now
        )
        changed: JsonObject = {"enabled": False, "disabled_reason": AUTO_DISABLED}
        action = "webhook_endpoint.updated"
        change = Change(endpoint.application_id, DELIVERIES, action, ENDPOINT, endpoint.id, changes=changed)
        await activity.record(conn, runtime.clock, change)
