"""Money is an integer in the currency's minor unit plus an ISO 4217 code, end to end.

Currency data (codes and minor-unit exponents) comes from the maintained ``iso4217`` package,
which tracks ISO's published list. Codes without a minor unit (gold, test codes) are refused.
"""

from __future__ import annotations

from functools import cache

from iso4217 import Currency

# Largest accepted amount: 15 digits, below 2**53 so JSON readers in any language keep it exact.
MAX_AMOUNT = 999_999_999_999_999


@cache
def exponent(code: str) -> int | None:
    """The minor-unit exponent (CLP 0, USD 2, BHD 3), or None for an unknown or unit-less code."""
    if len(code) != 3 or not code.isalpha() or not code.isupper():
        return None
    try:
        value = Currency(code).exponent
    except ValueError:
        return None
    return value if isinstance(value, int) else None


def is_currency(code: str) -> bool:
    return exponent(code) is not None
