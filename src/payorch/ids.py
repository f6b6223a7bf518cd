"""Prefixed, URL-safe, time-ordered identifiers: 48 bits of milliseconds then 96 random bits.

Ids of one kind sort by creation time (to the millisecond), which keyset pagination and the
exports' "oldest first" use. Within one millisecond, one process's ids sort in the order it made
them: the next id of the same millisecond is the previous one plus one (the random bits drawn once
a millisecond). Two processes' ids of the same millisecond sort in no promised order.
"""

from __future__ import annotations

import os
import secrets
import threading
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lowercase
_LENGTH = 29  # ceil(144 / 5)


# Two characters per 10 bits: a table lookup each instead of a divmod of the whole number.
_PAIRS = tuple(high + low for high in _ALPHABET for low in _ALPHABET)
_BITS_50 = (1 << 50) - 1


def _encode(number: int) -> str:
    # Written out, no loop: the 144 bits are cut into three numbers of 50 bits or fewer (one
    # machine word each, cheap to shift), and the first character holds the top 4 bits alone.
    # Half the time of a loop of divmods; the most frequent call of a create (seven ids).
    p = _PAIRS
    high, middle, low = number >> 100, (number >> 50) & _BITS_50, number & _BITS_50
    return "".join(
        (
            _ALPHABET[high >> 40], p[(high >> 30) & 1023], p[(high >> 20) & 1023],
            p[(high >> 10) & 1023], p[high & 1023],
            p[middle >> 40], p[(middle >> 30) & 1023], p[(middle >> 20) & 1023],
            p[(middle >> 10) & 1023], p[middle & 1023],
            p[low >> 40], p[(low >> 30) & 1023], p[(low >> 20) & 1023],
            p[(low >> 10) & 1023], p[low & 1023],
        )
    )


class _Latest:
    """This process's latest id made at the clock's time: its millisecond and its value."""

    lock = threading.Lock()
    ms = -1
    value = 0

    @classmethod
    def forget(cls) -> None:  # a forked child draws its own bits, never its parent's next
        cls.lock = threading.Lock()
        cls.ms = -1


os.register_at_fork(after_in_child=_Latest.forget)


def _now_value() -> int:
    ms = int(time.time() * 1000) & ((1 << 48) - 1)
    with _Latest.lock:
        if ms == _Latest.ms:
            _Latest.value += 1  # same millisecond: after the previous one, in the order made
        else:
            _Latest.ms, _Latest.value = ms, (ms << 96) | secrets.randbits(96)
        return _Latest.value


def new_id(prefix: str, at_ms: int | None = None) -> str:
    """A new id such as ``payi_01jd...``; ``prefix`` is given without the underscore.

    ``at_ms`` (tests, backfills) stamps a given millisecond with fresh random bits: no order
    within it. Without it, the clock's millisecond, after this process's previous id of it.
    """
    if at_ms is None:
        return f"{prefix}_{_encode(_now_value())}"
    value = ((at_ms & ((1 << 48) - 1)) << 96) | secrets.randbits(96)
    return f"{prefix}_{_encode(value)}"


def id_pattern(prefix: str) -> str:
    """The regular expression of every id of ``prefix``: what an API field of such ids accepts."""
    return rf"^{prefix}_[0-9a-hjkmnp-tv-z]{{{_LENGTH}}}$"  # _ALPHABET as a character class


def lowest_id(prefix: str, at_ms: int) -> str:
    """The smallest id of ``prefix`` created at ``at_ms``: a bound for time-range queries."""
    return f"{prefix}_{_encode((at_ms & ((1 << 48) - 1)) << 96)}"
