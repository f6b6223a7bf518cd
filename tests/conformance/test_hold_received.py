"""A capture or void the provider received and confirms later (HoldStatus.PENDING: a provider
whose notification is its word, providers/words.py) stays in flight: answered 202, the payment
still REQUIRES_CAPTURE, a second action refused, until the provider's word settles it (here the
hold job reading the hold). Provider A planted, in this module only, to answer "received" after
its real capture or void; read back, its hold says what happened."""

from __future__ import annotations

import dataclasses

import pytest

from payorch.payments.hold_job import SettleHoldActions
from payorch.providers.base import ConnectorContext
from payorch.providers.holds import HoldCalls, HoldRef, HoldState, HoldStatus
from payorch.providers.provider_a.registration import REGISTRATION as A
from payorch.providers.registration import ProviderRegistration
from payorch.simulator.conformance import Money
from tests.checkouts.helpers import run_until_idle
from tests.conformance.holds import books, capture, held, payment, void
from tests.conformance.kit import Shop
from tests.conformance.planted import use_planted

assert A.hold_calls is not None
REAL: HoldCalls = A.hold_calls


class Received:
    """A's hold calls, answering as a provider that says its outcome later."""

    def __init__(self) -> None:
        self.word_came = False  # until then, the read says nothing either

    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        await REAL.capture(ctx, hold, amount, key)
        return HoldState(HoldStatus.PENDING)

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        await REAL.void(ctx, hold, key)
        return HoldState(HoldStatus.PENDING)

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        return await REAL.read_hold(ctx, hold) if self.word_came else HoldState(HoldStatus.PENDING)


@pytest.fixture
def provider() -> ProviderRegistration:
    return A


async def _settle(shop: Shop) -> None:
    shop.clock.advance(120)  # past the action's check time
    await run_until_idle(SettleHoldActions(), shop.runtime)


@pytest.mark.parametrize("action", ["capture", "void"])
async def test_a_received_action_stays_in_flight_until_the_provider_says(
    shop: Shop, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    calls = Received()
    use_planted(monkeypatch, dataclasses.replace(A, hold_calls=calls), shop)
    checkout, payment_id = await held(shop)
    answered = await (capture(shop, payment_id, key="k-1") if action == "capture" else void(shop, payment_id))
    assert answered.status_code == 202, answered.text
    assert answered.json()["status"] == "REQUIRES_CAPTURE"
    assert (await void(shop, payment_id)).status_code == 409  # one action at a time
    if action == "capture":  # the same key answers the same 202, and calls nothing
        again = await capture(shop, payment_id, key="k-1")
        assert (again.status_code, again.json()) == (202, answered.json())

    await _settle(shop)  # the provider has not said yet: nothing moves, nothing is cleared
    assert await shop.status(checkout.intent_id) == "REQUIRES_CAPTURE"
    assert (await void(shop, payment_id)).status_code == 409

    calls.word_came = True
    await _settle(shop)
    expected = ("AUTHORIZED", Money(0, shop.amount)) if action == "capture" else ("CANCELLED", Money(0, 0))
    assert (await shop.status(checkout.intent_id), await books(shop, checkout)) == expected
    assert (await payment(shop, payment_id))["status"] == ("AUTHORIZED" if action == "capture" else "VOIDED")
