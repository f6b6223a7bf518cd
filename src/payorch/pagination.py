"""Pages of the API's lists ({items, next_cursor}, newest first) and their keyset cursors: a
cursor is the position of the previous page's last item (payorch.http.listing documents each)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from payorch.ids import lowest_id

# limit and the cursor's pattern are checked by the list's query model (payorch.http.listing).


def id_range(
    prefix: str, cursor: str | None, from_: datetime | None, to: datetime | None
) -> tuple[str | None, str | None]:
    """A list of ``prefix`` ids' cursor and ``from``/``to`` as an id range [lowest, below): ids
    are time-ordered to the millisecond (payorch.ids), so a time range is an id range on the
    list's own index."""
    after = cursor  # its pattern (payorch.http.listing.id_cursor) was checked: any such id is a position
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
    return Page(items, position(items[-1]) if len(found) > limit else None)
