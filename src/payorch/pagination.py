"""Pages of the API's lists ({items, next_cursor}, newest first) and their opaque keyset cursors."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from payorch.errors import ValidationFailed
from payorch.ids import lowest_id

# limit and the cursor's shape are checked by the list's query model (payorch.http.listing).


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


def id_of_cursor(cursor: str, *, prefix: str) -> str:
    """The id a cursor of a list of ``prefix`` ids carries (400 naming ``cursor`` otherwise)."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    if not re.fullmatch(prefix + r"_[0-9a-z]{29}", raw):  # payorch.ids: prefix_ + 29 base32
        raise ValidationFailed.field("cursor", "is not a cursor this API gave")
    return raw


def id_range(
    prefix: str, cursor: str | None, from_: datetime | None, to: datetime | None
) -> tuple[str | None, str | None]:
    """A list of ``prefix`` ids' cursor and ``from``/``to`` as an id range [lowest, below): ids
    are time-ordered to the millisecond (payorch.ids), so a time range is an id range on the
    list's own index."""
    after = id_of_cursor(cursor, prefix=prefix) if cursor else None
    lowest = lowest_id(prefix, _millis(from_)) if from_ else None
    below = lowest_id(prefix, _millis(to)) if to else None
    if after is not None:
        below = after if below is None else min(below, after)
    return lowest, below


def _millis(moment: datetime) -> int:
    return max(0, int(moment.timestamp() * 1000))


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
