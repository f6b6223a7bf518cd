"""Time-based one-time passwords (RFC 6238, with pyotp): a person's authenticator app shows a
6-digit code that changes every 30 seconds. The secret is shown once, as a QR code (drawn by
segno, as a data: URI the dashboard's Content-Security-Policy allows) and as text, and stored
encrypted (payorch.crypto)."""

from __future__ import annotations

import hmac
from datetime import datetime

import pyotp
import segno

ISSUER = "payorch"
# A code is accepted during its 30 seconds and the 30 seconds either side (clocks drift).
VALID_WINDOW = 1


def new_secret() -> str:
    """A new base32 secret (160 bits)."""
    return pyotp.random_base32(32)


def provisioning_uri(secret: str, email: str, application_name: str) -> str:
    """The otpauth:// URI an authenticator app reads from the QR code."""
    return pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=f"{ISSUER} ({application_name})")


def qr_data_uri(uri: str) -> str:
    """``uri`` as a QR code in an SVG data: URI (an <img src>, no inline script or style)."""
    return segno.make(uri, error="m").svg_data_uri(scale=5, border=2)


def matching_step(secret: str, code: str, now: datetime) -> int | None:
    """The time step (``now`` // 30 s, or a step either side) whose code ``code`` is (spaces
    allowed); None if it is none of them. The step lets a used code be refused the second time
    (RFC 6238, section 5.2: a code is accepted once)."""
    digits = "".join(code.split())
    if len(digits) != 6 or not digits.isdigit():
        return None
    generator = pyotp.TOTP(secret)
    step = generator.timecode(now)
    for candidate in range(step - VALID_WINDOW, step + VALID_WINDOW + 1):
        # As bytes: compare_digest refuses a str with a non-ASCII character.
        if hmac.compare_digest(generator.generate_otp(candidate).encode(), digits.encode()):
            return candidate
    return None


def spaced(secret: str) -> str:
    """The secret in groups of four, as people type it into an app."""
    return " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))
