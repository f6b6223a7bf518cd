"""Opaque keyset cursors for the lists of this domain and of events ({items, next_cursor})."""

from __future__ import annotations

import base64
import binascii

from payorch.errors import ValidationFailed

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def encode(position: str) -> str:
    return base64.urlsafe_b64encode(position.encode()).decode().rstrip("=")


def decode(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        position = base64.urlsafe_b64decode(padded.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        raise ValidationFailed.field("cursor", "Not a cursor returned by this list.") from None
    if not position or not position.isprintable() or len(position) > 64:
        raise ValidationFailed.field("cursor", "Not a cursor returned by this list.")
    return position
