"""Conformance: every payment status the provider's wire names (as its driver enumerates them,
with what changes their meaning) maps, through its payment_results, to a move or to "undecided,
ask again" (PROCESSING, NOT_PAID, or ProviderUnavailable); never IGNORED for its own checkout,
and a status it does not know is never guessed at. No database: once per provider."""

from __future__ import annotations

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    Credentials,
    Mode,
    PaymentOutcome,
    ProviderUnavailable,
)
from payorch.providers.registration import ProviderRegistration
from tests.conformance.kit import driver_of

MOVES = {PaymentOutcome.AUTHORIZED, PaymentOutcome.FAILED, PaymentOutcome.CANCELLED, PaymentOutcome.EXPIRED}
ASK_AGAIN = {PaymentOutcome.PROCESSING, PaymentOutcome.NOT_PAID}


async def test_every_status_maps_to_a_move_or_to_ask_again(provider: ProviderRegistration) -> None:
    driver = driver_of(provider)
    async with httpx.AsyncClient() as unused:  # the mapping makes no call
        ctx = ConnectorContext(
            connector_id="cfg_conformance",
            application_id="app_conformance",
            provider=provider.provider_id,
            mode=Mode.MOCK,
            base_url="http://testserver/simulator/" + provider.simulator_name,
            credentials=Credentials({}),
            http=unused,
            clock=FrozenClock(),
        )
        checkout = CheckoutRef(
            payment_intent_id="payi_conformance",
            checkout_id="chk_conformance",
            provider_reference="ref_conformance",
            amount=driver.charges.amount,
            currency=driver.charges.currency,
        )
        cases = driver.status_cases(ctx, checkout)
        assert cases, f"{provider.provider_id}'s driver names no status"
        meanings: dict[str, str] = {}
        for case in cases:
            try:
                result = case.read()
            except ProviderUnavailable:
                meanings[case.label] = "ask again (unavailable)"
                continue
            assert result.outcome in MOVES | ASK_AGAIN, (case.label, result)
            if result.outcome is PaymentOutcome.AUTHORIZED:
                assert result.amount == driver.charges.amount and result.authorized_at is not None, (
                    case.label,
                    result,
                )
            else:
                assert result.reason, (case.label, result)  # every "not paid" says why
            meanings[case.label] = result.outcome.value
        assert PaymentOutcome.AUTHORIZED.value in meanings.values(), meanings
        assert set(meanings.values()) - {PaymentOutcome.AUTHORIZED.value}, meanings
        with pytest.raises(ProviderUnavailable):  # an unknown status: ask again, never a guess
            driver.unknown_status(ctx, checkout)
