"""Provider B's signed notifications: an outbox written with the payment change, sent after commit.

Real shape: POST ``notification_url?data.id=<id>&type=payment`` with the JSON body of the docs
and ``x-signature: ts=<unix>,v1=<hex>``: HMAC-SHA256 under the webhook_secret of
``id:<data.id>;request-id:<x-request-id>;ts:<ts>;``.
Only URLs of this service itself (PAYORCH_PUBLIC_URL) are notified: in MOCK mode that is the
service's provider-notification endpoint; the simulator never POSTs to other hosts.
Sent in the background right after the change (a few quick retries), then by the worker job on
a backoff schedule until delivered or out of attempts.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import uuid
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.ids import new_id
from payorch.runtime import Runtime
from payorch.simulator.credentials import webhook_secret
from payorch.simulator.provider_b import repository

log = logging.getLogger("payorch.simulator")

QUICK_RETRIES = (0.0, 0.3, 1.0)  # seconds before each immediate attempt
BACKOFF = (60, 300, 900, 3600, 21600)  # then, before each worker attempt
LEASE_SECONDS = 60
ANSWER_SECONDS = 22  # the provider waits this long for a 2xx


def _same_origin(url: str, public_url: str) -> bool:
    a, b = urlsplit(url), urlsplit(public_url)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


async def enqueue(
    conn: AsyncConnection, runtime: Runtime, payment: Any, action: str, now: datetime
) -> str | None:
    """Write the notification of ``payment`` in the caller's transaction; its id (None: no URL)."""
    url = payment.notification_url
    if not url or not _same_origin(url, runtime.settings.public_url):
        return None
    separator = "&" if urlsplit(url).query else "?"
    target = url + separator + urlencode({"data.id": str(payment.id), "type": "payment"})
    notification_id = new_id("smn")
    body = {
        "id": int(uuid.uuid4().int % 10**11),
        "live_mode": False,
        "type": "payment",
        "date_created": isoformat(now),
        "user_id": payment.collector_id,
        "api_version": "v1",
        "action": action,
        "data": {"id": str(payment.id)},
    }
    await repository.insert_notification(
        conn,
        id=notification_id,
        owner=payment.owner,
        payment_id=payment.id,
        url=target,
        body=body,
        status="PENDING",
        attempts=0,
        next_attempt_at=now + timedelta(seconds=LEASE_SECONDS),  # the immediate sender holds it
        created_at=now,
    )
    return notification_id


def signature_headers(secret: str, data_id: str, now: datetime) -> dict[str, str]:
    request_id = str(uuid.uuid4())
    ts = str(int(now.timestamp()))
    manifest = f"id:{data_id};request-id:{request_id};ts:{ts};"
    digest = hmac.new(secret.encode(), manifest.encode(), hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "x-signature": f"ts={ts},v1={digest}",
        "x-request-id": request_id,
    }


async def _attempt(runtime: Runtime, row: Any) -> tuple[bool, str | None]:
    secret = webhook_secret(runtime.cipher, row.owner)
    headers = signature_headers(secret, str(row.body["data"]["id"]), runtime.clock.now())
    try:
        async with asyncio.timeout(ANSWER_SECONDS):
            answer = await runtime.http.post(
                row.url, content=orjson.dumps(row.body), headers=headers
            )
    except Exception as exc:  # noqa: BLE001 - any failure is retried later
        return False, f"{type(exc).__name__}: {exc}"[:255]
    if answer.status_code in (200, 201):
        return True, None
    return False, f"HTTP {answer.status_code}"


async def _record(runtime: Runtime, row: Any, ok: bool, error: str | None) -> None:
    attempts = row.attempts + 1
    now = runtime.clock.now()
    if ok:
        values: dict[str, Any] = {"status": "DELIVERED", "attempts": attempts, "last_error": None}
    elif attempts - len(QUICK_RETRIES) >= len(BACKOFF):
        values = {"status": "GAVE_UP", "attempts": attempts, "last_error": error}
    else:
        wait = BACKOFF[max(0, attempts - len(QUICK_RETRIES))]
        values = {
            "attempts": attempts,
            "last_error": error,
            "next_attempt_at": now + timedelta(seconds=wait),
        }
    async with runtime.database.transaction() as conn:
        await repository.record_attempt(conn, row.id, **values)


async def deliver_now(runtime: Runtime, notification_ids: list[str]) -> None:
    """Send freshly written notifications (after their transaction committed), quick retries."""
    for notification_id in notification_ids:
        for pause in QUICK_RETRIES:
            if pause:
                await asyncio.sleep(pause)
            async with runtime.database.transaction() as conn:
                row = await repository.notification_of(conn, notification_id)
            if row is None or row.status != "PENDING":
                break
            ok, error = await _attempt(runtime, row)
            await _record(runtime, row, ok, error)
            if ok:
                break
            log.warning("simulator notification %s failed: %s", notification_id, error)


async def deliver_due(runtime: Runtime, limit: int = 20) -> int:
    """The worker's pass: claim due notifications (lease), send each once. How many were sent."""
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        due = await repository.due_notifications(conn, now, limit)
    sent = 0
    for candidate in due:
        async with runtime.database.transaction() as conn:
            row = await repository.claim_notification(
                conn,
                candidate.id,
                candidate.next_attempt_at,
                now + timedelta(seconds=LEASE_SECONDS),
            )
        if row is None:
            continue  # another worker took it
        ok, error = await _attempt(runtime, row)
        await _record(runtime, row, ok, error)
        sent += 1
    return sent
