"""Identifiers: the 29 characters are the 144-bit value (milliseconds, then random bits) in
Crockford base32, most significant first, so ids of one kind sort by creation time (and one
process's ids of one millisecond in the order it made them)."""

from __future__ import annotations

import re
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from payorch import ids
from payorch.ids import id_pattern, lowest_id, new_id

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def reference(value: int) -> str:
    """One character per 5 bits, written out the plain way."""
    return "".join(ALPHABET[(value >> (5 * (28 - i))) & 31] for i in range(29))


@given(st.integers(min_value=0, max_value=(1 << 48) - 1))
def test_lowest_id_is_the_milliseconds_in_base32(ms: int) -> None:
    assert lowest_id("payi", ms) == "payi_" + reference(ms << 96)


@given(st.integers(min_value=0, max_value=(1 << 48) - 2))
def test_ids_sort_by_their_millisecond(ms: int) -> None:
    first, later = new_id("evt", ms), new_id("evt", ms + 1)
    assert re.match(id_pattern("evt"), first) and re.match(id_pattern("evt"), later)
    assert lowest_id("evt", ms) <= first < lowest_id("evt", ms + 1) <= later


@given(
    st.integers(min_value=0, max_value=(1 << 48) - 1),
    st.integers(min_value=0, max_value=(1 << 96) - 1),
)
def test_new_id_is_milliseconds_then_random_bits_in_base32(ms: int, random_bits: int) -> None:
    with patch.object(ids.secrets, "randbits", return_value=random_bits):
        assert new_id("whd", ms) == "whd_" + reference((ms << 96) | random_bits)


def test_one_processs_ids_of_one_millisecond_sort_in_the_order_made() -> None:
    ms = 1_795_000_000_000
    with patch.object(ids.time, "time", return_value=(ms + 0.5) / 1000):
        made = [new_id("pay") for _ in range(50)]
    assert made == sorted(made) and len(set(made)) == 50
    assert all(lowest_id("pay", ms) <= i < lowest_id("pay", ms + 1) for i in made)
    # A later millisecond draws fresh random bits, still above every id of the earlier one.
    with patch.object(ids.time, "time", return_value=(ms + 1.5) / 1000):
        assert new_id("pay") > made[-1]
