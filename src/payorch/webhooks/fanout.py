"""The outbox fan-out: called by events.service.emit in the transaction that writes the event, so
an event and its deliveries commit together (or not at all)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.ids import new_id
from payorch.webhooks import repository


async def fan_out(
    conn: AsyncConnection, *, event_id: str, application_id: str, event_type: str, at: datetime
) -> int:
    """One PENDING delivery, due now, per enabled endpoint subscribed to the type ([] = all)."""
    targets = [
        row.id
        for row in await repository.subscribed_endpoints(conn, application_id)
        if not row.events or event_type in row.events
    ]
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
