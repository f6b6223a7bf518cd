"""Prefixed, URL-safe, time-ordered identifiers: 48 bits of milliseconds then 96 random bits.

Ids of one kind sort by creation time (to the millisecond), which keyset pagination uses.
"""

from __future__ import annotations

import secrets
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


def new_id(prefix: str, at_ms: int | None = None) -> str:
    """A new id such as ``payi_01jd...``; ``prefix`` is given without the underscore."""
    ms = int(time.time() * 1000) if at_ms is None else at_ms
    value = ((ms & ((1 << 48) - 1)) << 96) | secrets.randbits(96)
    return f"{prefix}_{_encode(value)}"


def id_pattern(prefix: str) -> str:
    """The regular expression of every id of ``prefix``: what an API field of such ids accepts."""
    return rf"^{prefix}_[0-9a-hjkmnp-tv-z]{{{_LENGTH}}}$"  # _ALPHABET as a character class


def lowest_id(prefix: str, at_ms: int) -> str:
    """The smallest id of ``prefix`` created at ``at_ms``: a bound for time-range queries."""
    return f"{prefix}_{_encode((at_ms & ((1 << 48) - 1)) << 96)}"
