"""The conformance kit fails a provider that declares holds it does not have (Hyperswitch
#14350: connectors advertising manual capture that is not implemented). Provider B is planted
with a HoldSupport declaration: payorch's API then routes a manual intent to it, but its page
takes the money at once, and the kit's first step of holds, "approved on the page is held, not
taken", fails on payorch's state and on the provider's own books."""

from __future__ import annotations

import dataclasses

import pytest

from payorch.providers.provider_b.registration import REGISTRATION as B
from payorch.providers.registration import HoldSupport, ProviderRegistration
from payorch.simulator.conformance import Money
from tests.conformance.holds import books, held, start_held
from tests.conformance.kit import Shop
from tests.conformance.planted import use_planted

PLANTED = dataclasses.replace(
    B, holds=HoldSupport(partial_capture=True, max_captures=1, void=True, window_days=7)
)


@pytest.fixture
def provider(monkeypatch: pytest.MonkeyPatch) -> ProviderRegistration:
    """Provider B, declaring holds it does not have (this module only)."""
    use_planted(monkeypatch, PLANTED)
    return PLANTED


async def test_a_hold_declared_and_not_implemented_fails_the_kit(shop: Shop) -> None:
    with pytest.raises(AssertionError, match="'status': 'AUTHORIZED'"):
        await held(shop)  # the kit's own step: approved on the page must be held, not taken


async def test_the_books_show_the_money_taken_not_held(shop: Shop) -> None:
    checkout = await start_held(shop)  # routed there: the API believes the declaration
    await shop.pay(checkout, "approve")
    assert await shop.status(checkout.intent_id) == "AUTHORIZED"  # taken at once
    assert await books(shop, checkout) == Money(held=0, taken=shop.amount)
