"""Writing notifications into the outbox, in the transaction of the move that makes them."""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.ids import new_id
from payorch.jsontypes import JsonObject
from payorch.simulator.outbox import repository
from payorch.simulator.outbox.records import Notification

LEASE_SECONDS = 60  # a sender holds a notification this long (the immediate one, a worker)


def same_origin(url: str, public_url: str) -> bool:
    a, b = urlsplit(url), urlsplit(public_url)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


def _pending(
    provider: str, owner: str, subject: str, url: str, body: JsonObject, now: datetime
) -> Notification:
    return Notification(
        id=new_id("smn"),
        provider=provider,
        owner=owner,
        subject=subject,
        url=url,
        body=body,
        status="PENDING",
        attempts=0,
        next_attempt_at=now + timedelta(seconds=LEASE_SECONDS),  # the immediate sender holds it
        last_error=None,
        created_at=now,
    )


async def enqueue(
    conn: AsyncConnection,
    public_url: str,
    *,
    provider: str,
    owner: str,
    subject: str,
    url: str | None,
    body: JsonObject,
    now: datetime,
) -> Notification | None:
    """Write one notification to ``url`` (None: no URL, or not one of this service's own, so
    nothing is written: the simulator never POSTs to other hosts). Hand the record to
    ``sender.send_after_commit`` once the caller's transaction committed."""
    if not url or not same_origin(url, public_url):
        return None
    notification = _pending(provider, owner, subject, url, body, now)
    await repository.insert_notification(conn, notification)
    return notification


async def again(conn: AsyncConnection, notification: Notification, now: datetime) -> Notification:
    """The same notification (same target and body) delivered once more, as a provider's
    retries deliver duplicates."""
    n = notification
    copy = _pending(n.provider, n.owner, n.subject, n.url, n.body, now)
    await repository.insert_notification(conn, copy)
    return copy
