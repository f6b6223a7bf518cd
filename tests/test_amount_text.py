"""payorch.amount_text: what a locale writes, it reads back exactly; what it does not write, it
refuses (the dashboard's forms drive the same function: tests/dashboard/test_typed_amounts.py)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from babel import Locale
from babel.numbers import format_decimal
from hypothesis import given
from hypothesis import strategies as st

from payorch.amount_text import UnreadableAmount, read_amount, rule
from payorch.money import MAX_AMOUNT, exponent

LOCALES = [Locale.parse(name) for name in ("en_US", "es_CL", "de_CH", "pt_BR")]
CURRENCIES = ["CLP", "USD", "BHD", "JPY"]


def written_for_typing(minor: int, currency: str, locale: Locale, grouped: bool) -> str:
    places = exponent(currency) or 0
    pattern = ("#,##0" if grouped else "0") + ("." + "0" * places if places else "")
    return format_decimal(Decimal(minor).scaleb(-places), format=pattern, locale=locale)


@given(
    minor=st.integers(min_value=1, max_value=MAX_AMOUNT),
    currency=st.sampled_from(CURRENCIES),
    locale=st.sampled_from(LOCALES),
    grouped=st.booleans(),
)
def test_what_a_locale_writes_it_reads_back(minor: int, currency: str, locale: Locale, grouped: bool) -> None:
    assert read_amount(written_for_typing(minor, currency, locale, grouped), currency, locale) == minor


@given(text=st.text(max_size=12), currency=st.sampled_from(CURRENCIES), locale=st.sampled_from(LOCALES))
def test_anything_else_is_refused_or_is_what_the_locale_writes(
    text: str, currency: str, locale: Locale
) -> None:
    try:
        minor = read_amount(text, currency, locale)
    except UnreadableAmount as refused:
        assert rule(currency, locale) in str(refused) or "more than any payment" in str(refused)
        return
    # Accepted: the text, without its grouping, is the amount as the locale writes it.
    symbols = locale.number_symbols["latn"]
    bare = text.strip().replace(symbols["group"], "")
    places = exponent(currency) or 0
    assert Decimal(bare.replace(symbols["decimal"], ".")).scaleb(places) == minor
    assert set(bare) <= set("0123456789" + symbols["decimal"])


@pytest.mark.parametrize(
    ("typed", "locale", "minor"),
    [("10,50", "es_CL", 1050), ("1.500", "es_CL", 150_000), ("1'234.50", "de_CH", 123_450)],
)
def test_another_locale_reads_by_its_own_rule(typed: str, locale: str, minor: int) -> None:
    assert read_amount(typed, "USD", Locale.parse(locale)) == minor
    with pytest.raises(UnreadableAmount):
        read_amount(typed, "USD")  # English: the comma groups, the apostrophe is nothing
