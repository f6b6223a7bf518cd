"""The v1 signature: hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed by the secret text; and
the Standard Webhooks signature with the same key."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

SECRET_BYTES = 32  # 64 hexadecimal characters


def new_secret() -> str:
    return secrets.token_hex(SECRET_BYTES)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()


# Standard Webhooks (standardwebhooks.com): the same key bytes as v1 (the secret's text), so an
# endpoint has one secret; its `whsec_` form is "whsec_" + base64 of that text (docs/webhooks.md).
def standard_signature(secret: str, event_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` value: "v1," + base64 HMAC-SHA256 of "<id>.<timestamp>.<body>"."""
    message = f"{event_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


# Several secrets sign while a rotation overlaps (the new one first): the X-Pay header lists them
# comma-separated, the Standard Webhooks header space-separated, as that specification has it.
def signatures(keys: Sequence[str], timestamp: int, body: bytes) -> str:
    return ",".join(signature(secret, timestamp, body) for secret in keys)


def standard_signatures(keys: Sequence[str], event_id: str, timestamp: int, body: bytes) -> str:
    return " ".join(standard_signature(secret, event_id, timestamp, body) for secret in keys)
