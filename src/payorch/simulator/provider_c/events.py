"""Simulated provider C's signed events: what is C's own (the event object, the signature); the
simulator's outbox (simulator/outbox) writes them with the change and sends them.

Each event goes to the session's ``metadata[payorch_notification_url]`` (when that URL is this
service's own: the outbox writes no other). The body is the provider's event object;
``Stripe-Signature`` is made at each attempt with the owner's webhook secret.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject
from payorch.providers.provider_c.registration import REGISTRATION
from payorch.providers.provider_c.signature import sign as signature
from payorch.simulator.outbox import write
from payorch.simulator.outbox.records import Notification, Notifier
from payorch.simulator.provider_c.credentials import webhook_secret
from payorch.simulator.provider_c.records import SimCSession
from payorch.simulator.provider_c.render import unix
from payorch.simulator.provider_c.wire import new_object_id

API_VERSION = "2026-10-28.endive"


async def enqueue(
    conn: AsyncConnection,
    public_url: str,
    session: SimCSession,
    event_type: str,
    data_object: JsonObject,
    now: datetime,
) -> Notification | None:
    """Write one delivery of an event about ``session`` (None: the session names no URL of
    this service)."""
    url = session.metadata.get("payorch_notification_url")
    body: JsonObject = {
        "id": new_object_id("evt_"),
        "object": "event",
        "api_version": API_VERSION,
        "created": unix(now),
        "data": {"object": data_object},
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": None, "idempotency_key": None},
        "type": event_type,
    }
    return await write.enqueue(
        conn,
        public_url,
        provider=NOTIFIER.provider,
        owner=session.owner,
        subject=session.id,
        url=url if isinstance(url, str) else None,
        body=body,
        now=now,
    )


def sign(cipher: Cipher, notification: Notification, payload: bytes, now: datetime) -> dict[str, str]:
    secret = webhook_secret(cipher, notification.owner)
    return {
        "Content-Type": "application/json; charset=utf-8",
        "Stripe-Signature": signature(secret, payload, int(now.timestamp())),
    }


NOTIFIER = Notifier(provider=REGISTRATION.simulator_name, sign=sign, answer_seconds=20)
