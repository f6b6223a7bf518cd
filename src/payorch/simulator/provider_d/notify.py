"""Simulated provider D's standard notifications: what is D's own (the item, its HMAC); the
simulator's outbox (simulator/outbox) writes them with the change and sends them.

Each notification carries one ``NotificationRequestItem`` and goes to the session's
``metadata[payorch_notification_url]`` (the real provider: to the URL registered in its Customer
Area, which is that same URL). It is written unsigned, and sealed at each attempt: the item's
``additionalData.hmacSignature`` made with the owner's HMAC key (§6.5 of the protocol).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject
from payorch.simulator.outbox import write
from payorch.simulator.outbox.records import Notification, Notifier
from payorch.simulator.provider_d.credentials import hmac_key
from payorch.simulator.provider_d.records import SimDSession
from payorch.simulator.provider_d.wire import NAME

_SIGNED = ("pspReference", "originalReference", "merchantAccountCode", "merchantReference")


def signature(item: JsonObject, key_hex: str) -> str:
    """HMAC-SHA256 of the item's eight signed values joined by ':' (unescaped), Base64."""
    amount = item["amount"]
    assert isinstance(amount, dict)
    values = [str(item.get(name, "")) for name in _SIGNED]
    values += [str(amount["value"]), str(amount["currency"]), str(item["eventCode"]), str(item["success"])]
    mac = hmac.new(binascii.a2b_hex(key_hex), ":".join(values).encode(), hashlib.sha256)
    return base64.b64encode(mac.digest()).decode()


def item(
    session: SimDSession,
    event: str,
    psp: str,
    value: int,
    *,
    success: bool,
    now: datetime,
    original: str | None = None,
    reason: str = "",
    extra: dict[str, str] | None = None,
) -> JsonObject:
    made: JsonObject = {
        "additionalData": {"checkoutSessionId": session.id, **(extra or {})},
        "amount": {"currency": session.currency, "value": value},
        "eventCode": event,
        "eventDate": now.isoformat(timespec="seconds"),
        "merchantAccountCode": session.merchant_account,
        "merchantReference": session.reference,
        "paymentMethod": "visa",
        "pspReference": psp,
        "reason": reason,
        "success": "true" if success else "false",  # strings, as the HMAC and the library expect
    }
    if original is not None:
        made["originalReference"] = original
    return made


async def enqueue(
    conn: AsyncConnection, public_url: str, session: SimDSession, made: JsonObject, now: datetime
) -> Notification | None:
    """Write one notification of ``made`` (None: the session names no URL of this service)."""
    body: JsonObject = {"live": "false", "notificationItems": [{"NotificationRequestItem": made}]}
    return await write.enqueue(
        conn,
        public_url,
        provider=NAME,
        owner=session.owner,
        subject=session.id,
        url=session.notification_url,
        body=body,
        now=now,
    )


def seal(cipher: Cipher, notification: Notification) -> JsonObject:
    """The body as sent: every item signed with the owner's HMAC key."""
    key = hmac_key(cipher, notification.owner)
    wrappers = notification.body["notificationItems"]
    assert isinstance(wrappers, list)
    items = []
    for wrapper in wrappers:
        assert isinstance(wrapper, dict) and isinstance(wrapper["NotificationRequestItem"], dict)
        unsigned = wrapper["NotificationRequestItem"]
        extra = unsigned.get("additionalData")
        data = {**(extra if isinstance(extra, dict) else {}), "hmacSignature": signature(unsigned, key)}
        items.append({"NotificationRequestItem": {**unsigned, "additionalData": data}})
    return {**notification.body, "notificationItems": items}


def sign(cipher: Cipher, notification: Notification, payload: bytes, now: datetime) -> dict[str, str]:
    return {"Content-Type": "application/json"}  # the signature is inside each item (seal)


NOTIFIER = Notifier(provider=NAME, sign=sign, seal=seal, answer_seconds=10)
