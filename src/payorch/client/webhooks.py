"""Verify payorch's outgoing webhook notices (docs/api.md, Outgoing notices; docs/webhooks.md).

    event = verify(request_body_bytes, request.headers, secret)

Pass the body exactly as received (bytes, before any JSON parsing): the signature covers the
raw bytes, and re-serializing would change them. ``X-Pay-Signature`` is ``v1=<hex>`` where hex
is HMAC-SHA256(key=secret as text, message=f"{X-Pay-Timestamp}.{raw body}"). A notice whose
timestamp is more than ``tolerance`` seconds away from now, in either direction, is refused,
so a captured notice cannot be replayed later. Deduplicate verified events by ``event.id``.

Each notice also carries the Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``,
``webhook-signature``), keyed with the same secret; ``verify`` checks them when the X-Pay
headers are absent, and ``standard_secret`` gives the secret's ``whsec_`` form for that
specification's own libraries.

While a secret is rotated with an overlap (docs/webhooks.md, Rotating the secret), each notice
carries one signature per secret (comma-separated ``v1=`` values, space-separated ``v1,``
values); pass both secrets, ``verify(body, headers, [new_secret, old_secret])``, and a notice
signed with either verifies.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence

from payorch.client.errors import WebhookVerificationError
from payorch.client.models import Event

DEFAULT_TOLERANCE_SECONDS = 300
SIGNATURE_HEADER = "x-pay-signature"
TIMESTAMP_HEADER = "x-pay-timestamp"
EVENT_ID_HEADER = "x-pay-event-id"
SCHEME = "v1"
# Standard Webhooks (standardwebhooks.com), sent beside the X-Pay headers with the same key.
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
STANDARD_PREFIX = "whsec_"


def compute_signature(raw_body: bytes, timestamp: int | str, secret: str) -> str:
    """The ``X-Pay-Signature`` value for a body and timestamp (for tests and tooling)."""
    message = str(timestamp).encode("ascii") + b"." + raw_body
    digest = hmac.new(_key(secret), message, hashlib.sha256).hexdigest()
    return f"{SCHEME}={digest}"


def standard_secret(secret: str) -> str:
    """The endpoint secret's ``whsec_`` form, for Standard Webhooks libraries: "whsec_" + base64 of
    the secret's text (the same key bytes as the X-Pay signature)."""
    if secret.startswith(STANDARD_PREFIX):
        return secret
    return STANDARD_PREFIX + base64.b64encode(secret.encode("utf-8")).decode("ascii")


def compute_standard_signature(
    raw_body: bytes, event_id: str, timestamp: int | str, secret: str
) -> str:
    """The ``webhook-signature`` value ("v1,<base64>") for a body, id and timestamp."""
    message = f"{event_id}.{timestamp}.".encode() + raw_body
    digest = hmac.new(_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def verify(
    raw_body: bytes,
    headers: Mapping[str, str],
    secret: str | Sequence[str],
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> Event:
    """The verified event; raises WebhookVerificationError (answer 400) on any mismatch.

    Checks the ``X-Pay-*`` headers when present, else the Standard Webhooks ``webhook-*`` ones.
    ``secret`` is the endpoint secret as created, or its ``whsec_`` form; or several of them
    (during a rotation's overlap): a signature by any of them is enough."""
    if not isinstance(raw_body, bytes | bytearray):
        raise TypeError("raw_body must be the bytes of the request body, as received")
    keys = [secret] if isinstance(secret, str) else list(secret)
    if not keys or not all(keys):
        raise ValueError("secret is required")
    lowered = {k.lower(): v for k, v in headers.items()}
    body = bytes(raw_body)
    if SIGNATURE_HEADER in lowered or STANDARD_SIGNATURE_HEADER not in lowered:
        timestamp_text = lowered.get(TIMESTAMP_HEADER, "").strip()
        _check_timestamp(timestamp_text, lowered.get(SIGNATURE_HEADER, ""), tolerance, now)
        expected = [compute_signature(body, timestamp_text, key) for key in keys]
        # Several comma-separated signatures may be sent (e.g. while a secret is replaced): any
        # v1 match is enough.
        candidates = lowered[SIGNATURE_HEADER].split(",")
        id_header = EVENT_ID_HEADER
    else:
        timestamp_text = lowered.get(STANDARD_TIMESTAMP_HEADER, "").strip()
        event_id = lowered.get(STANDARD_ID_HEADER, "").strip()
        _check_timestamp(
            timestamp_text, event_id and lowered[STANDARD_SIGNATURE_HEADER], tolerance, now
        )
        expected = [
            compute_standard_signature(body, event_id, timestamp_text, key) for key in keys
        ]
        candidates = lowered[STANDARD_SIGNATURE_HEADER].split(" ")  # "v1,<b64> v1,<b64>"
        id_header = STANDARD_ID_HEADER
    # Every candidate is compared in constant time.
    matched = False
    for candidate in candidates:
        for wanted in expected:
            matched |= hmac.compare_digest(candidate.strip().encode(), wanted.encode())
    if not matched:
        raise WebhookVerificationError("bad_signature", "The signature does not match the body.")
    try:
        event = Event.model_validate(json.loads(body))
    except ValueError as exc:
        raise WebhookVerificationError("bad_body", f"The body is not an event: {exc}") from None
    header_id = lowered.get(id_header)
    if header_id is not None and header_id != event.id:
        raise WebhookVerificationError(
            "bad_body", "The event id header differs from the body's id."
        )
    return event


def _key(secret: str) -> bytes:
    if secret.startswith(STANDARD_PREFIX):
        return base64.b64decode(secret[len(STANDARD_PREFIX) :] + "==")
    return secret.encode("utf-8")


def _check_timestamp(
    timestamp_text: str, signature_text: str, tolerance: int, now: float | None
) -> None:
    if not timestamp_text or not signature_text.strip():
        raise WebhookVerificationError(
            "missing_header",
            "X-Pay-Timestamp or X-Pay-Signature (or webhook-id, webhook-timestamp or "
            "webhook-signature) is missing.",
        )
    if not timestamp_text.isdigit() or len(timestamp_text) > 12:
        raise WebhookVerificationError("bad_timestamp", "The timestamp is not Unix seconds.")
    current = time.time() if now is None else now
    if abs(current - int(timestamp_text)) > tolerance:
        raise WebhookVerificationError(
            "timestamp_out_of_tolerance", "The timestamp is too far from the current time."
        )
