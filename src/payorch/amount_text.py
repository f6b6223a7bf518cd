"""Amounts as people type and read them: one rule for every form, read and written with Babel.

The rule (docs/dashboard.md, "Amounts you type"): digits, optionally grouped in thousands with the
locale's group symbol exactly where that locale puts it, then at most one decimal symbol followed
by at most the currency's minor-unit digits (USD 2, CLP 0, BHD 3). Nothing else: no sign, no
exponent (`1e2`), no underscore (`1_000`), no `Infinity` or `NaN`, no other script's digits, no
space. Babel checks the grouping (`strict=True`); the characters are checked before it because
Babel hands what it does not recognise to ``Decimal``, which reads `1e2`, `1_000`, `-5` and `sNaN`.

Anything else is refused with a message that says what to type, and moves nothing. The dashboard
reads and writes in English conventions (``DASHBOARD_LOCALE``), so `10,50` in USD is refused (in
English the comma groups thousands) rather than read as 1,050.00 or 10.50.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal

from babel import Locale
from babel.numbers import NumberFormatError, format_currency, format_decimal, parse_decimal

from payorch.money import MAX_AMOUNT, exponent

DASHBOARD_LOCALE = Locale.parse("en_US")  # one convention for every operator, on every page
LONGEST = 40  # characters: 15 digits with grouping and decimals fit; longer is refused unread
_DIGITS = frozenset("0123456789")


class UnreadableAmount(ValueError):
    """What a person typed is not an amount under the rule; ``str()`` says what to type."""


def _places(currency: str) -> int:
    return exponent(currency) or 0


def example(currency: str, locale: Locale = DASHBOARD_LOCALE) -> str:
    """An amount written under the rule, to show beside a field: USD '1,234.56', CLP '1,234'."""
    places = _places(currency)
    pattern = "#,##0" + ("." + "0" * places if places else "")
    value = Decimal("1234.5678").quantize(Decimal(1).scaleb(-places), ROUND_DOWN)
    return format_decimal(value, format=pattern, locale=locale)


def rule(currency: str, locale: Locale = DASHBOARD_LOCALE) -> str:
    """The rule in words, for a form's label and for every refusal."""
    places = _places(currency)
    group = locale.number_symbols["latn"]["group"]
    if not places:
        return (
            f"whole {currency} (it has no decimals), with '{group}' between thousands if you like, "
            f"such as {example(currency, locale)} or 1234"
        )
    decimal = locale.number_symbols["latn"]["decimal"]
    return (
        f"{currency} with '{decimal}' before at most {places} decimals, and '{group}' between "
        f"thousands if you like, such as {example(currency, locale)}"
    )


def read_amount(text: str, currency: str, locale: Locale = DASHBOARD_LOCALE) -> int:
    """What a person typed, in the currency's minor units: USD '1,234.50' -> 123450.

    Raises UnreadableAmount (its message says what to type) for anything outside the rule,
    for zero, and for more than the largest amount the API accepts."""
    places = _places(currency)
    symbols = locale.number_symbols["latn"]
    decimal, group = symbols["decimal"], symbols["group"]
    typed = text.strip()
    if not typed:
        raise UnreadableAmount(f"Type an amount: {rule(currency, locale)}.")
    allowed = _DIGITS | {decimal, group}
    if len(typed) > LONGEST or not set(typed) <= allowed:
        raise UnreadableAmount(f"'{_shown(typed)}' is not an amount. Type {rule(currency, locale)}.")
    whole, _, fraction = typed.partition(decimal)
    if decimal in fraction or group in fraction or not whole or whole[0] not in _DIGITS:
        raise UnreadableAmount(f"'{typed}' is not an amount. Type {rule(currency, locale)}.")
    if decimal in typed and not fraction:
        raise UnreadableAmount(f"'{typed}' ends with '{decimal}'. Type {rule(currency, locale)}.")
    if len(fraction) > places:
        raise UnreadableAmount(
            f"'{typed}' has {len(fraction)} decimals and {currency} has {places or 'none'}. "
            f"Type {rule(currency, locale)}."
        )
    try:
        value = parse_decimal(typed, locale=locale, strict=True)
    except NumberFormatError:  # a group symbol out of place: '10,50' or '1,5' in English
        raise UnreadableAmount(
            f"'{typed}' is not an amount: '{group}' only separates thousands here. "
            f"Type {rule(currency, locale)}."
        ) from None
    minor = int(value.scaleb(places))
    if minor <= 0:
        raise UnreadableAmount(f"Type an amount above zero: {rule(currency, locale)}.")
    if minor > MAX_AMOUNT:
        raise UnreadableAmount(f"'{typed}' is more than any payment can be.")
    return minor


def written(minor: int, currency: str, locale: Locale = DASHBOARD_LOCALE) -> str:
    """An amount in minor units in the currency's own format: 1050 USD -> '$10.50', 1500 CLP ->
    'CLP 1,500' (a currency without a symbol in the locale shows its code, then a space)."""
    shown = format_currency(Decimal(minor).scaleb(-_places(currency)), currency, locale=locale)
    return currency + " " + shown[len(currency) :] if shown.startswith(currency) else shown


def _shown(typed: str) -> str:
    """What was typed, cut short for a message (a long paste is not echoed whole)."""
    return typed if len(typed) <= LONGEST else typed[:LONGEST] + "…"
