"""Simulated provider D's standard notifications: one item each, to the session's
``metadata[payorch_notification_url]``, signed at each attempt with the owner's HMAC key."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.crypto import Cipher
from payorch.jsontypes import JsonObject
from payorch.providers.provider_d import wire
from payorch.simulator.outbox import write
from payorch.simulator.outbox.records import Notification, Notifier, json_content
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import NAME, hmac_key


def signature(item: JsonObject, key_hex: str) -> str:
    return wire.signature(wire.NotificationItem.model_validate(item), key_hex)


def item(
    session: SimDSession, event: str, psp: str, value: int, *, success: bool, now: datetime,
    original: str | None = None, reason: str = "", extra: dict[str, str] | None = None,
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
) -> list[Notification]:
    """One notification of ``made``; none when the session names no URL of this service."""
    body: JsonObject = {"live": "false", "notificationItems": [{"NotificationRequestItem": made}]}
    url, owner = session.notification_url, session.owner
    written = await write.enqueue(
        conn, public_url, provider=NAME, owner=owner, subject=session.id, url=url, body=body, now=now
    )
    return [written] if written else []


def seal(cipher: Cipher, notification: Notification) -> JsonObject:
    """The body as sent: every item signed with the owner's HMAC key."""
    key, items, wrappers = hmac_key(cipher, notification.owner), [], notification.body["notificationItems"]
    for wrapper in wrappers if isinstance(wrappers, list) else []:
        unsigned = wrapper.get("NotificationRequestItem") if isinstance(wrapper, dict) else None
        assert isinstance(unsigned, dict)
        extra = unsigned.get("additionalData")
        data = {**(extra if isinstance(extra, dict) else {}), "hmacSignature": signature(unsigned, key)}
        items.append({"NotificationRequestItem": {**unsigned, "additionalData": data}})
    return {**notification.body, "notificationItems": items}


NOTIFIER = Notifier(provider=NAME, sign=json_content, seal=seal, answer_seconds=10)  # signed inside: seal
