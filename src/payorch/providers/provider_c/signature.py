"""Provider C's event signature: ``Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]``, each
``v1`` the hex HMAC-SHA256 under the endpoint's ``webhook_secret`` of ``<t>.<raw body>``.

Accepted when one ``v1`` matches in constant time and ``t`` is within
``NOTIFICATION_TOLERANCE_SECONDS`` of our clock; ``sign`` is the same computation, for the
simulator and the tests.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import datetime

from payorch.providers.base import InvalidNotification

NOTIFICATION_TOLERANCE_SECONDS = 300
HEADER = "stripe-signature"


def _digest(secret: str, timestamp: str, body: bytes) -> str:
    return hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, timestamp: int) -> str:
    return f"t={timestamp},v1={_digest(secret, str(timestamp), body)}"


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: datetime,
    tolerance_seconds: int = NOTIFICATION_TOLERANCE_SECONDS,
) -> None:
    """Raises InvalidNotification unless the header signs ``body`` recently with ``secret``."""
    header = next((v for k, v in headers.items() if k.lower() == HEADER), "")
    if not header:
        raise InvalidNotification("missing Stripe-Signature")
    timestamp = ""
    signatures: list[str] = []
    for piece in header.split(","):
        key, sep, value = piece.strip().partition("=")
        if not sep:
            continue
        if key == "t":
            timestamp = value
        elif key == "v1":
            signatures.append(value)
    if not timestamp.isdigit() or not signatures:
        raise InvalidNotification("Stripe-Signature lacks t or v1")
    if abs(now.timestamp() - int(timestamp)) > tolerance_seconds:
        raise InvalidNotification("Stripe-Signature t is outside the tolerance")
    expected = _digest(secret, timestamp, body).encode()
    # Every candidate is compared (no early exit on the first match).
    matched = [hmac.compare_digest(expected, candidate.encode()) for candidate in signatures]
    if not any(matched):
        raise InvalidNotification("Stripe-Signature does not match")
