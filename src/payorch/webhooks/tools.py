"""Webhook tools (docs/webhooks.md): send a test event to one endpoint, roll an endpoint's secret
with an overlap window, and read what a delivery sent (its event's body and payment intent).

Every function runs in the request's transaction (``conn``) and never commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.crypto import Cipher
from payorch.db.tables import events
from payorch.db.tables.webhooks import webhook_deliveries as deliveries
from payorch.db.tables.webhooks import webhook_endpoints as endpoints
from payorch.errors import InvalidState, LimitExceeded
from payorch.events import repository as event_rows
from payorch.events.catalogue import WebhookTest
from payorch.events.service import payload_event
from payorch.events.types import WEBHOOK_TEST
from payorch.webhooks import repository
from payorch.webhooks.fanout import new_delivery
from payorch.webhooks.records import PENDING, Delivery, WebhookEndpoint
from payorch.webhooks.service import ENDPOINT, SHOWN_ONCE, get_endpoint
from payorch.webhooks.signing import new_secret

TEST_EVENT_TYPE = WEBHOOK_TEST
# A test event is a real event and delivery (GET /v1/events lists it): so that an endpoint cannot
# become a way to fill the tables, at most this many of its test deliveries may wait at once.
MAX_PENDING_TESTS = 10
MAX_OVERLAP_SECONDS = 7 * 24 * 3600
DEFAULT_OVERLAP_SECONDS = 24 * 3600


async def send_test_event(conn: AsyncConnection, clock: Clock, caller: Caller, endpoint_id: str) -> Delivery:
    """A ``webhook.test`` event (``"test": true``) queued to this endpoint only, through the
    normal delivery engine (signed, retried, recorded like any other)."""
    # The endpoint's row locked first: concurrent requests count one after the other, each in a
    # statement after the lock (a fresh snapshot), so the cap holds.
    await repository.lock_endpoint(conn, caller.application_id, endpoint_id)
    endpoint = await get_endpoint(conn, caller, endpoint_id)
    if not endpoint.enabled:
        raise InvalidState(
            "DISABLED",
            "The endpoint is disabled: enable it (PATCH enabled: true), then send a test event.",
            allowed=["ENABLED"],
        )
    waiting = await _pending_tests(conn, endpoint_id)
    if waiting >= MAX_PENDING_TESTS:
        raise LimitExceeded(
            "pending test deliveries for this endpoint",
            limit=MAX_PENDING_TESTS,
            current=waiting,
            remedy="Wait until the endpoint's earlier test deliveries succeed or are exhausted.",
        )
    test = WebhookTest(webhook_endpoint_id=endpoint.id, url=endpoint.url)
    # "test": true in its envelope; never traced (as it always was)
    event = payload_event(application_id=caller.application_id, payload=test, at=clock.now(), traced=False)
    await event_rows.insert_event(conn, event)
    delivery = new_delivery(event, endpoint.id)  # this endpoint only: no fan-out
    await repository.insert_deliveries(conn, [delivery])
    await repository.notify_workers(conn)
    logged = {"event_id": event.id, "webhook_delivery_id": delivery.id}
    await record_by(conn, clock, caller, "webhook_endpoint.tested", (ENDPOINT, endpoint.id), logged)
    return delivery


async def _pending_tests(conn: AsyncConnection, endpoint_id: str) -> int:
    query = select(func.count()).where(
        and_(
            deliveries.c.endpoint_id == endpoint_id,
            deliveries.c.status == PENDING,
            deliveries.c.event_type == TEST_EVENT_TYPE,
        )
    )
    return int((await conn.execute(query)).scalar_one())


async def rotate_secret(
    conn: AsyncConnection,
    clock: Clock,
    cipher: Cipher,
    caller: Caller,
    endpoint_id: str,
    *,
    overlap_seconds: int,
) -> tuple[WebhookEndpoint, str]:
    """A new secret (returned here only, stored encrypted). For ``overlap_seconds`` the replaced
    one keeps signing beside it; a secret replaced earlier and still overlapping stops at once
    (only the two newest sign). ``overlap_seconds`` 0 ends the old secret now."""
    await get_endpoint(conn, caller, endpoint_id)  # 404 unless it is the application's
    now = clock.now()
    secret = new_secret()
    overlapping = overlap_seconds > 0
    await conn.execute(
        update(endpoints)
        .where(endpoints.c.id == endpoint_id)
        .values(
            secret_encrypted=cipher.encrypt(secret),
            # The column's value before this UPDATE: two rotations at once chain, none is lost.
            previous_secret_encrypted=endpoints.c.secret_encrypted if overlapping else None,
            previous_secret_expires_at=now + timedelta(seconds=overlap_seconds) if overlapping else None,
            updated_at=now,
        )
    )
    logged = {"overlap_seconds": overlap_seconds} | SHOWN_ONCE  # the new secret's value never
    await record_by(conn, clock, caller, "webhook_endpoint.secret_rotated", (ENDPOINT, endpoint_id), logged)
    return await get_endpoint(conn, caller, endpoint_id), secret


def overlap_ends(endpoint: WebhookEndpoint, now: datetime) -> datetime | None:
    """When the previous secret stops signing; None when it no longer does."""
    ends = endpoint.previous_secret_expires_at
    return ends if ends is not None and ends > now else None


@dataclass(frozen=True, slots=True)
class SentEvent:
    """What a delivery sends: its event's exact body and the payment intent it is about."""

    payload: str
    payment_intent_id: str | None


async def sent_event(conn: AsyncConnection, event_id: str) -> SentEvent:
    query = select(events.c.payload, events.c.payment_intent_id).where(events.c.id == event_id)
    row = (await conn.execute(query)).one()
    return SentEvent(row.payload, row.payment_intent_id)
