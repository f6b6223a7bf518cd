"""Provider B's notification signature: ``x-signature`` (HMAC-SHA256 with the connector's
``webhook_secret``) over a manifest of the notified id, the request id and the timestamp.

Verified in constant time, with the timestamp within ``NOTIFICATION_TOLERANCE_SECONDS`` of our
clock; ``sign_notification`` is the same computation, for the simulator and the tests.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime

from payorch.providers.base import InvalidNotification

# A notification whose ts is further than this from our clock (either way) is refused, like
# our own outgoing webhooks (docs/webhooks.md: 5 minutes). The provider signs every delivery
# afresh.
NOTIFICATION_TOLERANCE_SECONDS = 300


def verify_signature(
    secret: str,
    headers: Mapping[str, str],
    query: Mapping[str, str],
    *,
    now: datetime,
    tolerance_seconds: int = NOTIFICATION_TOLERANCE_SECONDS,
) -> str | None:
    """Check ``x-signature`` (``ts=<unix seconds>,v1=<hex>``) over the manifest
    ``id:<data.id>;request-id:<x-request-id>;ts:<ts>;`` (absent parts dropped). Returns the
    signed data.id (or None when the notification names none). Raises InvalidNotification."""
    lowered = {k.lower(): v for k, v in headers.items()}
    signature = lowered.get("x-signature")
    if not signature:
        raise InvalidNotification("missing x-signature")
    parts: dict[str, str] = {}
    for piece in signature.split(","):
        key, sep, value = piece.strip().partition("=")
        if sep:
            parts[key.strip()] = value.strip()
    ts, v1 = parts.get("ts"), parts.get("v1")
    if not ts or not v1:
        raise InvalidNotification("x-signature lacks ts or v1")
    if not ts.isdigit():
        raise InvalidNotification("x-signature ts is not a number")
    seconds = int(ts)
    if seconds > 10**11:  # milliseconds, as some deliveries send
        seconds //= 1000
    if abs(now.timestamp() - seconds) > tolerance_seconds:
        raise InvalidNotification("x-signature ts is stale")
    data_id = query.get("data.id") or None
    if data_id is not None:
        data_id = data_id.lower()  # the provider signs alphanumeric ids in lowercase
    request_id = lowered.get("x-request-id") or None
    manifest = ""
    if data_id is not None:
        manifest += f"id:{data_id};"
    if request_id is not None:
        manifest += f"request-id:{request_id};"
    manifest += f"ts:{ts};"
    expected = hmac.new(secret.encode(), manifest.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), v1.lower().encode()):
        raise InvalidNotification("x-signature does not match")
    return data_id


def sign_notification(secret: str, *, data_id: str | None, request_id: str | None, ts: int) -> str:
    """The x-signature header value for a manifest (the simulator and tests sign with it)."""
    manifest = (f"id:{data_id};" if data_id else "") + (f"request-id:{request_id};" if request_id else "")
    manifest += f"ts:{ts};"
    return f"ts={ts},v1=" + hmac.new(secret.encode(), manifest.encode(), hashlib.sha256).hexdigest()
