"""The simulator pages' ``minor_money`` filter: an amount in the currency's minor units, as
providers count it, shown in the buyer's format with the currency's own decimals."""

from __future__ import annotations

import pytest

from payorch.simulator.pages import minor_money


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [(1050, "USD", "$10.50"), (1500, "CLP", "$1.500"), (1000, "JPY", "¥1,000"), (5, "USD", "$0.05")],
)
def test_minor_units_are_shown_in_the_currencys_own_decimals(amount: int, currency: str, shown: str) -> None:
    assert minor_money(amount, currency) == shown
