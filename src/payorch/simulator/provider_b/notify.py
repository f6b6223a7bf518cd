"""Provider B's signed notifications: what is B's own (the target, the body, the signature);
the simulator's outbox (simulator/outbox) writes them with the payment change and sends them.

Real shape: POST ``notification_url?data.id=<id>&type=payment`` with the JSON body of the docs
and ``x-signature: ts=<unix>,v1=<hex>``: HMAC-SHA256 under the webhook_secret of
``id:<data.id>;request-id:<x-request-id>;ts:<ts>;``. On request (the controls) also the older
IPN style ``?topic=payment&id=<id>`` (unsigned) and the merchant_order topic. B waits 22 s for
an answer and counts only 200 and 201 as delivered.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import datetime
from urllib.parse import parse_qsl, urlencode, urlsplit

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import isoformat
from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject
from payorch.providers.provider_b.registration import REGISTRATION
from payorch.simulator.outbox import write
from payorch.simulator.outbox.records import Notification, Notifier
from payorch.simulator.provider_b.credentials import webhook_secret
from payorch.simulator.provider_b.records import SimBPayment


async def enqueue(
    conn: AsyncConnection,
    public_url: str,
    payment: SimBPayment,
    action: str,
    now: datetime,
    *,
    style: str = "webhook",
    topic: str = "payment",
) -> Notification | None:
    """Write the notification of ``payment`` in the caller's transaction; the record (None: no
    URL of this service), to send once the transaction committed.
    ``style`` webhook (``?data.id=&type=``, signed) or ipn (the older ``?topic=&id=``, unsigned);
    ``topic`` payment or merchant_order (then it names the payment's merchant order)."""
    url = payment.notification_url
    if not url:
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
    return await write.enqueue(
        conn,
        public_url,
        provider=NOTIFIER.provider,
        owner=payment.owner,
        subject=str(payment.id),
        url=url + separator + urlencode(query),
        body=body,
        now=now,
    )


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


def sign(cipher: Cipher, notification: Notification, payload: bytes, now: datetime) -> dict[str, str]:
    """The webhook style is signed (its target names data.id); the older IPN style is not."""
    data_id = dict(parse_qsl(urlsplit(notification.url).query)).get("data.id")
    if data_id is None:
        return {"Content-Type": "application/json"}
    return signature_headers(webhook_secret(cipher, notification.owner), data_id, now)


NOTIFIER = Notifier(
    provider=REGISTRATION.simulator_name,
    sign=sign,
    answer_seconds=22,
    accepts=lambda status_code: status_code in (200, 201),
)
