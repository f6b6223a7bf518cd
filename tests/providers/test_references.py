"""providers/references.py: what a return or a notice names is checked before it is used."""

from __future__ import annotations

import pytest

from payorch.providers.base import PaymentOutcome
from payorch.providers.references import ProviderIds, ignored, same


def test_same_is_equality_of_two_present_references() -> None:
    assert same("tok_1", "tok_1")
    assert not same("tok_1", "tok_2")
    assert not same("tok_1", "tok_1 ")


@pytest.mark.parametrize(
    ("presented", "expected"), [(None, "x"), ("", "x"), ("x", None), ("x", ""), ("", "")]
)
def test_nothing_presented_or_nothing_to_compare_is_never_the_same(
    presented: str | None, expected: str | None
) -> None:
    assert not same(presented, expected)


def test_provider_ids_accept_only_the_provider_shape() -> None:
    ids = ProviderIds(r"[A-Za-z0-9_-]{1,8}")
    assert ids.valid("pay_12-A")
    assert ids.path("pay_12-A") == "pay_12-A"
    # Too long, a path separator, a query, a trailing newline, nothing: never an id.
    for bad in ("pay_12345", "../x", "a?b=1", "abc\n", "", None):
        assert not ids.valid(bad)
    with pytest.raises(ValueError, match="not a provider id"):
        ids.path("../admin")


def test_ignored_moves_nothing_and_says_why() -> None:
    result = ignored("the return names another checkout", {"payment_id": "9"})
    assert result.outcome is PaymentOutcome.IGNORED
    assert result.reason == "the return names another checkout"
    assert result.details == {"payment_id": "9"}
    assert result.provider_payment_reference is None and not result.is_final
    assert ignored("no details").details == {}
