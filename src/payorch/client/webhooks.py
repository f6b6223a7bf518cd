"""Verify payorch's outgoing webhook notices (docs/api.md, Outgoing notices; docs/webhooks.md).

    event = verify(request_body_bytes, request.headers, secret)

Pass the body exactly as received (bytes, before any JSON parsing): the signature covers the
raw bytes, and re-serializing would change them. ``X-Pay-Signature`` is ``v1=<hex>`` where hex
is HMAC-SHA256(key=secret as text, message=f"{X-Pay-Timestamp}.{raw body}"). A notice whose
timestamp is more than ``tolerance`` seconds away from now, in either direction, is refused,
so a captured notice cannot be replayed later. Deduplicate verified events by ``event.id``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping

from payorch.client.errors import WebhookVerificationError
from payorch.client.models import Event

DEFAULT_TOLERANCE_SECONDS = 300
SIGNATURE_HEADER = "x-pay-signature"
TIMESTAMP_HEADER = "x-pay-timestamp"
EVENT_ID_HEADER = "x-pay-event-id"
SCHEME = "v1"


def compute_signature(raw_body: bytes, timestamp: int | str, secret: str) -> str:
    """The ``X-Pay-Signature`` value for a body and timestamp (for tests and tooling)."""
    message = str(timestamp).encode("ascii") + b"." + raw_body
    digest = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()
    return f"{SCHEME}={digest}"


def verify(
    raw_body: bytes,
    headers: Mapping[str, str],
    secret: str,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> Event:
    """The verified event; raises WebhookVerificationError (answer 400) on any mismatch."""
    if not isinstance(raw_body, bytes | bytearray):
        raise TypeError("raw_body must be the bytes of the request body, as received")
    if not secret:
        raise ValueError("secret is required")
    lowered = {k.lower(): v for k, v in headers.items()}
    timestamp_text = lowered.get(TIMESTAMP_HEADER, "").strip()
    signature_text = lowered.get(SIGNATURE_HEADER, "").strip()
    if not timestamp_text or not signature_text:
        raise WebhookVerificationError(
            "missing_header", "X-Pay-Timestamp or X-Pay-Signature is missing."
        )
    if not timestamp_text.isdigit() or len(timestamp_text) > 12:
        raise WebhookVerificationError("bad_timestamp", "X-Pay-Timestamp is not Unix seconds.")
    current = time.time() if now is None else now
    if abs(current - int(timestamp_text)) > tolerance:
        raise WebhookVerificationError(
            "timestamp_out_of_tolerance", "X-Pay-Timestamp is too far from the current time."
        )
    expected = compute_signature(bytes(raw_body), timestamp_text, secret)
    # Several comma-separated signatures may be sent (e.g. while a secret is replaced): any
    # v1 match is enough. Every candidate is compared in constant time.
    matched = False
    for candidate in signature_text.split(","):
        candidate = candidate.strip()
        if candidate.startswith(f"{SCHEME}="):
            matched |= hmac.compare_digest(candidate.encode(), expected.encode())
    if not matched:
        raise WebhookVerificationError("bad_signature", "X-Pay-Signature does not match the body.")
    try:
        event = Event.model_validate(json.loads(raw_body))
    except ValueError as exc:
        raise WebhookVerificationError("bad_body", f"The body is not an event: {exc}") from None
    header_id = lowered.get(EVENT_ID_HEADER)
    if header_id is not None and header_id != event.id:
        raise WebhookVerificationError("bad_body", "X-Pay-Event-Id differs from the body's id.")
    return event
