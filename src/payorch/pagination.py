"""Pages of the API's lists ({items, next_cursor}, newest first) and their opaque keyset cursors."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

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


ItemT = TypeVar("ItemT")


@dataclass(frozen=True, slots=True)
class Page(Generic[ItemT]):
    """One page of a list, newest first; ``next_cursor`` is None on the last page."""

    items: list[ItemT]
    next_cursor: str | None


def page_of(found: list[ItemT], limit: int, position: Callable[[ItemT], str]) -> Page[ItemT]:
    """``found`` holds up to limit + 1 items: one more means another page follows, from the
    ``position`` of the page's last item."""
    items = found[:limit]
    return Page(items, encode(position(items[-1])) if len(found) > limit else None)
