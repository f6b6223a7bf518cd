"""Provider B's signed notifications: an outbox written with the payment change, sent after commit.

Real shape: POST ``notification_url?data.id=<id>&type=payment`` with the JSON body of the docs
and ``x-signature: ts=<unix>,v1=<hex>``: HMAC-SHA256 under the webhook_secret of
``id:<data.id>;request-id:<x-request-id>;ts:<ts>;``. On request (the controls) also the older
IPN style ``?topic=payment&id=<id>`` (unsigned) and the merchant_order topic.
Only URLs of this service itself (PAYORCH_PUBLIC_URL) are notified: in MOCK mode that is the
service's provider-notification endpoint; the simulator never POSTs to other hosts.
Sent in the background right after the change (a few quick retries), then by the worker job on
a backoff schedule until delivered or out of attempts. Sending is multi-phase: each read and each
record is its own short transaction (``Phases``), none open while a notification is POSTed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import uuid
from datetime import datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.db import Phases
from payorch.ids import new_id
from payorch.jsontypes import JsonObject
from payorch.runtime import Runtime
from payorch.simulator.provider_b import repository
from payorch.simulator.provider_b.credentials import webhook_secret
from payorch.simulator.provider_b.records import SimBAttempt, SimBNotification, SimBPayment
from payorch.simulator.simulated import AfterCommit, sending

log = logging.getLogger("payorch.simulator")

QUICK_RETRIES = (0.0, 0.3, 1.0)  # seconds before each immediate attempt
BACKOFF = (60, 300, 900, 3600, 21600)  # then, before each worker attempt
LEASE_SECONDS = 60
ANSWER_SECONDS = 22  # the provider waits this long for a 2xx


def _same_origin(url: str, public_url: str) -> bool:
    a, b = urlsplit(url), urlsplit(public_url)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


async def enqueue(
    conn: AsyncConnection,
    public_url: str,
    payment: SimBPayment,
    action: str,
    now: datetime,
    *,
    style: str = "webhook",
    topic: str = "payment",
) -> SimBNotification | None:
    """Write the notification of ``payment`` in the caller's transaction; the record (None: no
    URL), for deliver_now once the transaction has committed.
    ``style`` webhook (``?data.id=&type=``, signed) or ipn (the older ``?topic=&id=``, unsigned);
    ``topic`` payment or merchant_order (then it names the payment's merchant order)."""
    url = payment.notification_url
    if not url or not _same_origin(url, public_url):
        return None
    separator = "&" if urlsplit(url).query else "?"
    named = str(payment.merchant_order_id if topic == "merchant_order" else payment.id)
    body: JsonObject
    if style == "ipn":
        query = {"topic": topic, "id": named}
        path = "merchant_orders" if topic == "merchant_order" else "v1/payments"
        body = {"resource": f"{public_url}/simulator/provider_b/{path}/{named}", "topic": topic}
    else:
        kind = "topic_merchant_order_wh" if topic == "merchant_order" else "payment"
        query = {"data.id": named, "type": kind}
        body = {
            "id": int(uuid.uuid4().int % 10**11),
            "live_mode": False,
            "type": kind,
            "date_created": isoformat(now),
            "user_id": payment.collector_id,
            "api_version": "v1",
            "action": action,
            "data": {"id": named},
        }
    target = url + separator + urlencode(query)
    notification_id = new_id("smn")
    notification = SimBNotification(
        id=notification_id,
        owner=payment.owner,
        payment_id=payment.id,
        url=target,
        body=body,
        status="PENDING",
        attempts=0,
        next_attempt_at=now + timedelta(seconds=LEASE_SECONDS),  # the immediate sender holds it
        last_error=None,
        created_at=now,
    )
    await repository.insert_notification(conn, notification)
    return notification


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


async def _attempt(runtime: Runtime, notification: SimBNotification) -> tuple[bool, str | None]:
    data_id = dict(parse_qsl(urlsplit(notification.url).query)).get("data.id")
    headers = {"Content-Type": "application/json"}
    if data_id is not None:  # the webhook style is signed; the older IPN style is not
        secret = webhook_secret(runtime.cipher, notification.owner)
        headers = signature_headers(secret, data_id, runtime.clock.now())
    try:
        async with asyncio.timeout(ANSWER_SECONDS):
            answer = await runtime.http.post(
                notification.url, content=orjson.dumps(notification.body), headers=headers
            )
    except Exception as exc:  # noqa: BLE001 - any failure is retried later
        return False, f"{type(exc).__name__}: {exc}"[:255]
    if answer.status_code in (200, 201):
        return True, None
    return False, f"HTTP {answer.status_code}"


def _outcome(attempts: int, ok: bool, error: str | None, now: datetime) -> SimBAttempt:
    """Delivered, given up after the last backoff step, or due again after the next one."""
    if ok:
        return SimBAttempt(attempts, None, status="DELIVERED")
    if attempts - len(QUICK_RETRIES) >= len(BACKOFF):
        return SimBAttempt(attempts, error, status="GAVE_UP")
    wait = BACKOFF[max(0, attempts - len(QUICK_RETRIES))]
    return SimBAttempt(attempts, error, next_attempt_at=now + timedelta(seconds=wait))


async def _send(
    runtime: Runtime, phases: Phases, notification: SimBNotification
) -> tuple[bool, str | None]:
    """One attempt, then its record (one statement)."""
    ok, error = await _attempt(runtime, notification)
    outcome = _outcome(notification.attempts + 1, ok, error, runtime.clock.now())
    async with phases.each_statement() as conn:  # one UPDATE
        await repository.record_attempt(conn, notification.id, outcome)
    return ok, error


async def deliver_now(
    runtime: Runtime, phases: Phases, written: list[SimBNotification]
) -> None:
    """Send freshly written notifications (after their transaction committed), quick retries.
    The first attempt sends the record as written (PENDING, held from the worker by its
    ``next_attempt_at``); each retry reads it again (the worker may have taken it)."""
    for first in written:
        notification: SimBNotification | None = first
        for pause in QUICK_RETRIES:
            if pause:
                await asyncio.sleep(pause)
                async with phases.reading() as conn:
                    notification = await repository.notification_of(conn, first.id)
            if notification is None or notification.status != "PENDING":
                break
            ok, error = await _send(runtime, phases, notification)
            if ok:
                break
            log.warning("simulator notification %s failed: %s", first.id, error)


def sender(written: list[SimBNotification]) -> AfterCommit | None:
    """``deliver_now`` of ``written``, to run once their transaction committed (None: none)."""
    return sending(deliver_now, written)


async def deliver_due(runtime: Runtime, phases: Phases, limit: int = 20) -> int:
    """The worker's pass: claim due notifications (lease), send each once. How many were sent."""
    now = runtime.clock.now()
    async with phases.reading() as conn:
        due = await repository.due_notifications(conn, now, limit)
    sent = 0
    for notification_id, seen in due:
        async with phases.each_statement() as conn:  # a compare-and-set
            claimed = await repository.claim_notification(
                conn, notification_id, seen, now + timedelta(seconds=LEASE_SECONDS)
            )
        if claimed is None:
            continue  # another worker took it
        await _send(runtime, phases, claimed)
        sent += 1
    return sent
