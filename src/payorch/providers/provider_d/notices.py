"""Provider D's standard notifications: each item signed on its own (``hmacSignature``: HMAC-SHA256
with the hex key of eight of its values joined by ':', Base64) and kept, once verified, as the
provider's word. A body with one item that does not verify is refused whole: nothing kept."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from datetime import datetime

from pydantic import ValidationError

from payorch.providers.base import InvalidNotification
from payorch.providers.provider_d import wire
from payorch.providers.words import ProviderWord


def signature(item: wire.NotificationItem, key_hex: str) -> str:
    original, amount = item.original_reference or "", item.amount
    values = [item.psp_reference, original, item.merchant_account_code, item.merchant_reference]
    values += [str(amount.value), amount.currency, item.event_code, item.success]
    try:
        key = binascii.a2b_hex(key_hex)
    except (binascii.Error, ValueError):
        raise InvalidNotification("the connector's hmac_key is not hex") from None
    return base64.b64encode(hmac.new(key, ":".join(values).encode(), hashlib.sha256).digest()).decode()


def verified(body: bytes, key_hex: str, merchant_account: str) -> list[wire.NotificationItem]:
    """Every item of ``body``, each signed with ``key_hex`` for ``merchant_account``."""
    try:
        items = [w.item for w in wire.NotificationRequest.model_validate_json(body).notification_items]
    except ValidationError:
        raise InvalidNotification("not a notification of standard webhooks") from None
    for item in items:
        presented = item.additional_data.get("hmacSignature")
        if not isinstance(presented, str) or not hmac.compare_digest(presented, signature(item, key_hex)):
            raise InvalidNotification("an item's hmacSignature does not verify")
        if item.merchant_account_code != merchant_account:
            raise InvalidNotification("an item of another merchant account")
        if item.success not in ("true", "false"):
            raise InvalidNotification("an item whose success is not 'true' or 'false'")
    return items


def word_of(item: wire.NotificationItem) -> ProviderWord:
    try:
        at = datetime.fromisoformat(item.event_date) if item.event_date else None
    except ValueError:
        at = None
    return ProviderWord(
        event=item.event_code,
        reference=item.psp_reference,
        success=item.success == "true",
        original_reference=item.original_reference or None,
        merchant_reference=item.merchant_reference,
        amount=item.amount.value,
        currency=item.amount.currency,
        reason=item.reason or None,
        event_at=at if at is not None and at.tzinfo is not None else None,  # no offset: no time
    )
