"""The outbox fan-out: called by events.service.emit in the transaction that writes the event, so
an event and its deliveries commit together (or not at all)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.ids import new_id
from payorch.webhooks import repository

# What emit runs together with the event's INSERT: the rows given to fan_out as ``endpoints``.
SUBSCRIPTIONS = repository.SUBSCRIBED_ENDPOINTS


async def fan_out(
    conn: AsyncConnection,
    *,
    event_id: str,
    application_id: str,
    event_type: str,
    at: datetime,
    endpoints: Sequence[Any] | None = None,
) -> int:
    """One PENDING delivery, due now, per enabled endpoint subscribed to the type ([] = all).

    ``endpoints``: the rows of SUBSCRIPTIONS, read in this transaction (None: read them here).
    """
    if endpoints is None:
        endpoints = await repository.subscribed_endpoints(conn, application_id)
    targets = [row.id for row in endpoints if not row.events or event_type in row.events]
    if not targets:
        return 0
    await repository.insert_deliveries(
        conn,
        [
            {
                "id": new_id("whd"),
                "application_id": application_id,
                "endpoint_id": endpoint_id,
                "event_id": event_id,
                "event_type": event_type,
                "status": repository.PENDING,
                "attempts": 0,
                "schedule_attempts": 0,
                "next_attempt_at": at,
                "leased_until": None,
                "lease_token": None,
                "last_attempt_at": None,
                "response_status": None,
                "response_excerpt": None,
                "error": None,
                "created_at": at,
                "updated_at": at,
            }
            for endpoint_id in targets
        ],
    )
    await repository.notify_workers(conn)
    return len(targets)
