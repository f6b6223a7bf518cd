"""providers/references.py: what a return or a notice names is checked before it is used."""

from __future__ import annotations

import pytest

from payorch.providers.base import CheckoutRef, PaymentOutcome
from payorch.providers.references import Claims, ProviderIds, ignored, same


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


CHECKOUT = CheckoutRef("payi_1", "chk_1", "pref_1", 1500, "USD")


def test_claims_that_match_the_checkout_are_believed() -> None:
    assert Claims("external_reference", "payi_1", "USD", 1500, "chk_1").mismatch(CHECKOUT) is None
    assert Claims("external_reference", "payi_1", "USD", 1500).mismatch(CHECKOUT) is None  # says no checkout


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        (Claims("client_reference_id", "payi_2", "USD", 1500, "chk_1"), "client_reference_id differs"),
        (Claims("client_reference_id", None, "USD", 1500), "client_reference_id differs"),
        (Claims("external_reference", "payi_1", "CLP", 1500), "currency differs"),
        (Claims("external_reference", "payi_1", None, 1500), "currency differs"),
        (Claims("external_reference", "payi_1", "USD", 1501), "amount differs"),
        (Claims("external_reference", "payi_1", "USD", None), "amount differs"),
        (Claims("external_reference", "payi_1", "USD", 1500, "chk_0"), "made for another checkout"),
    ],
)
def test_claims_of_another_intent_currency_amount_or_checkout_are_not_believed(
    claims: Claims, why: str
) -> None:
    assert claims.mismatch(CHECKOUT) == why
