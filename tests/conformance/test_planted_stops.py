"""The conformance kit catches the two bugs a provider author made in a scratch provider (issue
42), each planted here in provider A's adapter (this module only) and run through the kit's own
steps (tests/conformance/stopped.py), which must fail:

- ``cancel_checkout`` that takes an approval it finds (provider A commits it) and still answers
  "nothing started": payorch cancels or expires the intent while the provider's books show the
  money taken;
- ``confirm_return`` without the check that the return's token and order are this checkout's:
  another checkout's approval is committed for this one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping

import pytest

from payorch.providers.base import CheckoutRef, ConnectorContext, PaymentOutcome, PaymentResult
from payorch.providers.provider_a import wire
from payorch.providers.provider_a.adapter import ProviderAAdapter
from payorch.providers.provider_a.registration import REGISTRATION as A
from payorch.providers.registration import ProviderRegistration
from tests.conformance.kit import Shop
from tests.conformance.planted import use_planted
from tests.conformance.stopped import another_checkouts_return, approved_then_cancelled, approved_then_expired
from tests.databases import own_database

database_url = own_database  # the expiry job sweeps the database: this module gets its own


class CapturingCancel(ProviderAAdapter):
    """As a provider that captures later was written: an approval is no payment until captured,
    so its status read says "not paid yet", and its stop captures what it finds."""

    async def read_status(
        self, ctx: ConnectorContext, checkout: CheckoutRef, *, payment_reference: str | None = None
    ) -> PaymentResult:
        seen = await self._read_transaction(ctx, checkout)
        if seen.outcome is PaymentOutcome.AUTHORIZED:
            return PaymentResult(PaymentOutcome.NOT_PAID, checkout.provider_reference, reason="approved")
        return seen

    async def cancel_checkout(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        await super().read_status(ctx, checkout)  # commits an approval it finds: the money is taken
        return PaymentResult(PaymentOutcome.NOT_PAID, checkout.provider_reference, reason="stopped")


class AnyonesToken(ProviderAAdapter):
    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        token = params.get(wire.TOKEN_WS) or checkout.provider_reference
        # The return's token taken as this checkout's, its order no longer compared.
        trusted = dataclasses.replace(checkout, provider_reference=token, provider_data={})
        return await super().confirm_return(ctx, trusted, params)


# (the adapter with the bug, the kit's steps, what the kit says when they fail)
PLANTS: dict[str, tuple[type[ProviderAAdapter], Callable[[Shop], Awaitable[object]], str]] = {
    "cancel_taking_the_money": (
        CapturingCancel,
        approved_then_cancelled,
        "the intent is CANCELLED, the provider's books show",
    ),
    "expiry_taking_the_money": (
        CapturingCancel,
        approved_then_expired,
        "the intent is EXPIRED, the provider's books show",
    ),
    "another_checkouts_token_accepted": (
        AnyonesToken,
        another_checkouts_return,
        "another checkout's reference",
    ),
}


@pytest.fixture
def provider() -> ProviderRegistration:
    return A  # each test plants its bug before the first call


@pytest.mark.parametrize("bug", list(PLANTS))
async def test_a_planted_bug_fails_the_kit(shop: Shop, monkeypatch: pytest.MonkeyPatch, bug: str) -> None:
    adapter, steps, said = PLANTS[bug]
    use_planted(monkeypatch, dataclasses.replace(A, adapter=adapter()), shop)
    with pytest.raises(AssertionError, match=said):
        await steps(shop)


async def test_unplanted_the_same_steps_pass(shop: Shop) -> None:
    assert await approved_then_cancelled(shop) == "AUTHORIZED"  # the provider wins
    assert await approved_then_expired(shop) == "AUTHORIZED"
    await another_checkouts_return(shop)
