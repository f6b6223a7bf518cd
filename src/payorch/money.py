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


def currencies() -> list[str]:
    """Every code an amount can be in (those with a minor unit), sorted: the document's enum."""
    return sorted(c.code for c in Currency if is_currency(c.code))


def currency_problem(code: str) -> str | None:
    """Why ``code`` cannot be an amount's currency, in words that say what to send; None if it can."""
    if is_currency(code):
        return None
    if len(code) == 3 and code.isalpha() and not code.isupper() and is_currency(code.upper()):
        return f"must be in upper case: {code.upper()}"
    try:
        known = Currency(code)
    except ValueError:
        return "must be an ISO 4217 currency code in upper case, such as CLP or USD"
    # Gold, SDR, test codes...: ISO 4217 gives them no minor unit, so no amount in minor units.
    return (
        f"{code} ({known.currency_name}) has no minor unit in ISO 4217, so an amount in minor "
        "units cannot be expressed; use a currency such as CLP or USD"
    )
