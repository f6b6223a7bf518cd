"""Simulated provider C's signed events: an outbox written with the change, sent after commit.

Each event goes to the session's ``metadata[payorch_notification_url]`` when that URL is this
service's own (PAYORCH_PUBLIC_URL's origin): the simulator never POSTs to other hosts. The
body is the provider's event object; ``Stripe-Signature`` is made at each attempt with the
owner's webhook secret. Sent right after the commit (quick retries), then by the worker job
(``deliver_due``) on a backoff until delivered or out of attempts. No transaction is open
while an event is POSTed.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import orjson
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db import Phases
from payorch.jsontypes import JsonObject
from payorch.providers.provider_c.signature import sign
from payorch.runtime import Runtime
from payorch.simulator.provider_c import repository
from payorch.simulator.provider_c.credentials import webhook_secret
from payorch.simulator.provider_c.records import SimCEvent, SimCSession
from payorch.simulator.provider_c.render import unix
from payorch.simulator.provider_c.wire import new_object_id
from payorch.simulator.simulated import AfterCommit, sending

log = logging.getLogger("payorch.simulator")

API_VERSION = "2026-10-28.endive"
QUICK_RETRIES = (0.0, 0.3, 1.0)
BACKOFF = (60, 300, 900, 3600, 21600)
LEASE_SECONDS = 60
ANSWER_SECONDS = 20


def _same_origin(url: str, public_url: str) -> bool:
    a, b = urlsplit(url), urlsplit(public_url)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


async def enqueue(
    conn: AsyncConnection,
    public_url: str,
    session: SimCSession,
    event_type: str,
    data_object: JsonObject,
    now: datetime,
) -> SimCEvent | None:
    """Write one delivery of an event about ``session`` (None: the session names no URL of
    this service)."""
    url = session.metadata.get("payorch_notification_url")
    if not isinstance(url, str) or not _same_origin(url, public_url):
        return None
    event_id = new_object_id("evt_")
    body: JsonObject = {
        "id": event_id,
        "object": "event",
        "api_version": API_VERSION,
        "created": unix(now),
        "data": {"object": data_object},
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": event_type,
    }
    event = SimCEvent(
        id=event_id,
        owner=session.owner,
        session_id=session.id,
        url=url,
        body=body,
        status="PENDING",
        attempts=0,
        next_attempt_at=now + timedelta(seconds=LEASE_SECONDS),  # the immediate sender holds it
        last_error=None,
        created_at=now,
    )
    await repository.insert_event(conn, event)
    return event


async def again(conn: AsyncConnection, event: SimCEvent, now: datetime) -> SimCEvent:
    """The same event (same id and body) delivered once more, as the provider's retries do."""
    copy = SimCEvent(
        id=new_object_id("evt_"),
        owner=event.owner,
        session_id=event.session_id,
        url=event.url,
        body=event.body,
        status="PENDING",
        attempts=0,
        next_attempt_at=now + timedelta(seconds=LEASE_SECONDS),
        last_error=None,
        created_at=now,
    )
    await repository.insert_event(conn, copy)
    return copy


async def _attempt(runtime: Runtime, event: SimCEvent) -> str | None:
    """One POST; None when answered 2xx, else why not."""
    payload = orjson.dumps(event.body)
    secret = webhook_secret(runtime.cipher, event.owner)
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "Stripe-Signature": sign(secret, payload, int(runtime.clock.now().timestamp())),
    }
    try:
        async with asyncio.timeout(ANSWER_SECONDS):
            answer = await runtime.http.post(event.url, content=payload, headers=headers)
    except Exception as exc:  # noqa: BLE001 - any failure is retried later
        return f"{type(exc).__name__}: {exc}"[:255]
    return None if 200 <= answer.status_code < 300 else f"HTTP {answer.status_code}"


async def _send(runtime: Runtime, phases: Phases, event: SimCEvent) -> bool:
    error = await _attempt(runtime, event)
    attempts = event.attempts + 1
    now = runtime.clock.now()
    status, next_at = "DELIVERED", now
    if error is not None:
        step = attempts - len(QUICK_RETRIES)
        if step >= len(BACKOFF):
            status = "GAVE_UP"
        else:
            status, next_at = "PENDING", now + timedelta(seconds=BACKOFF[max(0, step)])
    async with phases.each_statement() as conn:
        await repository.record_attempt(
            conn, event.id, attempts=attempts, status=status, next_attempt_at=next_at, last_error=error
        )
    return error is None


async def deliver_now(runtime: Runtime, phases: Phases, written: list[SimCEvent]) -> None:
    """Send freshly written events (after their transaction committed), with quick retries."""
    for first in written:
        event: SimCEvent | None = first
        for pause in QUICK_RETRIES:
            if pause:
                await asyncio.sleep(pause)
                async with phases.reading() as conn:
                    event = await repository.event_of(conn, first.id)
            if event is None or event.status != "PENDING":
                break
            if await _send(runtime, phases, event):
                break
            log.warning("simulator event %s not delivered", first.id)


async def deliver_due(runtime: Runtime, phases: Phases, limit: int = 20) -> int:
    """The worker's pass: claim due events (lease), send each once. How many were sent."""
    now = runtime.clock.now()
    async with phases.reading() as conn:
        due = await repository.due_events(conn, now, limit)
    sent = 0
    for event in due:
        async with phases.each_statement() as conn:
            claimed = await repository.claim_event(conn, event, now + timedelta(seconds=LEASE_SECONDS))
        if claimed:
            await _send(runtime, phases, event)
            sent += 1
    return sent


def sender(written: list[SimCEvent]) -> AfterCommit | None:
    """``deliver_now`` of ``written``, to run once their transaction committed (None: none)."""
    return sending(deliver_now, written)
