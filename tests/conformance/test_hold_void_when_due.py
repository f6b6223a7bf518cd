"""Conformance: PAYORCH_HOLD_UNCAPTURED=void (docs/payments.md, "A hold nobody captured"), for
every provider that declares holds, on SQLite and PostgreSQL: a hold nobody captured is voided
when it comes due (PAYORCH_HOLD_CAPTURE_DUE_SECONDS before capture_before, here an hour) after
payment.capture_due says so; a provider that cannot be reached is asked again, never guessed; a
hold already past its end is only read."""

from __future__ import annotations

import pytest

from payorch.payments.hold_job import SettleHoldActions
from payorch.payments.lapse_job import RECHECK_SECONDS
from payorch.simulator.conformance import Money
from tests.conformance.holds import books, held, payment
from tests.conformance.kit import Shop
from tests.conformance.lapse import at, at_the_end, events_typed, passes
from tests.conformance.timeouts import provider_timeout

HOUR = 3600


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    return {
        "provider_timeout_seconds": provider_timeout(request),
        "hold_uncaptured": "void",
        "hold_capture_due_seconds": HOUR,
    }


@pytest.fixture(autouse=True)
def needs_holds(shop: Shop) -> None:
    if shop.provider.holds is None or not shop.provider.holds.void:
        pytest.skip(f"{shop.id} declares no void of a hold")


async def test_a_hold_coming_due_is_voided(shop: Shop) -> None:
    checkout, payment_id = await held(shop)
    await at(shop, payment_id, HOUR + 60)
    await passes(shop)
    assert await shop.status(checkout.intent_id) == "REQUIRES_CAPTURE"
    await at(shop, payment_id, HOUR - 60)
    await passes(shop)
    await passes(shop)
    due = await events_typed(shop, checkout.intent_id, "payment.capture_due")
    assert [e["data"]["if_uncaptured"] for e in due] == ["void"], due
    shown = await payment(shop, payment_id)
    assert (shown["status"], shown["amount_released"], shown["amount_captured"]) == ("VOIDED", shop.amount, 0)
    assert await shop.status(checkout.intent_id) == "CANCELLED"
    types = await shop.event_types(checkout.intent_id)
    assert types[-2:] == ["payment.capture_due", "payment.voided"], types
    assert await books(shop, checkout) == Money(held=0, taken=0)


@pytest.mark.parametrize("fault", ["error", "timeout"])
async def test_a_provider_down_when_due_is_asked_again(shop: Shop, fault: str) -> None:
    checkout, payment_id = await held(shop)
    await at(shop, payment_id, HOUR - 60)
    await shop.set_fault(fault)
    try:
        await passes(shop)
    finally:
        await shop.set_fault("ok")
    assert (await payment(shop, payment_id))["status"] == "REQUIRES_CAPTURE"
    assert (await shop.event_types(checkout.intent_id)).count("payment.capture_due") == 1
    shop.clock.advance(RECHECK_SECONDS + 120)  # past the lease, and the unknown void's check
    for _ in range(3):
        await passes(shop)
        await SettleHoldActions().run_once(shop.runtime)
    assert (await payment(shop, payment_id))["status"] == "VOIDED"
    assert await shop.status(checkout.intent_id) == "CANCELLED"
    assert (await shop.event_types(checkout.intent_id)).count("payment.voided") == 1
    assert await books(shop, checkout) == Money(held=0, taken=0)


async def test_a_hold_past_its_end_is_read_not_voided(shop: Shop) -> None:
    """The worker was down until after capture_before: the hold is gone at the provider."""
    checkout, payment_id = await held(shop)
    await at_the_end(shop, payment_id)
    await passes(shop)
    types = await shop.event_types(checkout.intent_id)
    assert (types.count("payment.capture_due"), types.count("payment.expired")) == (1, 1), types
    assert "payment.voided" not in types
    assert await shop.status(checkout.intent_id) == "EXPIRED"
