"""The v1 signature: hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed by the secret text."""

from __future__ import annotations

import hashlib
import hmac
import secrets

SECRET_BYTES = 32  # 64 hexadecimal characters


def new_secret() -> str:
    return secrets.token_hex(SECRET_BYTES)


def signature(secret: str, timestamp: int, body: bytes) -> str:
    mac = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()
