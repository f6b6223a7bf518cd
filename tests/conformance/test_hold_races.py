"""Conformance: races on a hold, exact over many rounds, for every provider that declares holds
(SQLite and PostgreSQL): capture against void, two captures with two keys, and a capture
against the provider's own notification of the hold. Each round ends with exactly one winner,
one provider call's worth of money moved, one event, and payorch agreeing with the provider's
books."""

from __future__ import annotations

import asyncio

import pytest

from payorch.simulator.conformance import Money
from tests.conformance.holds import books, capture, held, payment, start_held, void
from tests.conformance.kit import Shop, needs_notifications

pytestmark = pytest.mark.slow  # many paid rounds
ROUNDS = 4


def needs_holds(shop: Shop) -> None:
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")


async def test_capture_against_void(shop: Shop) -> None:
    needs_holds(shop)
    for round_ in range(ROUNDS):
        checkout, payment_id = await held(shop)
        taken = shop.amount - shop.part
        captured, voided = await asyncio.gather(
            capture(shop, payment_id, taken, key=f"c-{round_}"), void(shop, payment_id, key=f"v-{round_}")
        )
        answers = sorted((captured.status_code, voided.status_code))
        assert answers == [200, 409], (round_, captured.text, voided.text)
        won_capture = captured.status_code == 200
        types = await shop.event_types(checkout.intent_id)
        assert (types.count("payment.captured"), types.count("payment.voided")) == (
            (1, 0) if won_capture else (0, 1)
        ), round_
        after = await payment(shop, payment_id)
        if won_capture:
            assert (after["status"], after["amount_captured"]) == ("AUTHORIZED", taken), after
            assert await books(shop, checkout) == Money(held=0, taken=taken)
        else:
            assert (after["status"], after["amount_captured"]) == ("VOIDED", 0), after
            assert await books(shop, checkout) == Money(held=0, taken=0)
        assert after["amount_capturable"] == 0


async def test_two_captures_with_two_keys(shop: Shop) -> None:
    needs_holds(shop)
    for round_ in range(ROUNDS):
        checkout, payment_id = await held(shop)
        one, other = shop.part, shop.amount - shop.part  # two different amounts
        first, second = await asyncio.gather(
            capture(shop, payment_id, one, key=f"a-{round_}"),
            capture(shop, payment_id, other, key=f"b-{round_}"),
        )
        assert sorted((first.status_code, second.status_code)) == [200, 409], (first.text, second.text)
        won = one if first.status_code == 200 else other
        assert (await payment(shop, payment_id))["amount_captured"] == won
        assert await books(shop, checkout) == Money(held=0, taken=won)
        assert (await shop.event_types(checkout.intent_id)).count("payment.captured") == 1


async def test_capture_against_the_providers_notification(shop: Shop) -> None:
    needs_holds(shop)
    needs_notifications(shop)
    for round_ in range(ROUNDS):
        checkout = await start_held(shop)
        shop.network.hold_notifications()
        try:
            await shop.pay(checkout, "approve")  # the return records the hold
        finally:
            held_back = shop.network.release()
        assert held_back, "the provider must have notified the hold"
        intent = await shop.read(checkout.intent_id)
        assert intent["status"] == "REQUIRES_CAPTURE", intent
        payment_id = str(intent["payment"]["id"])
        taken = shop.amount - shop.part
        captured, *notified = await asyncio.gather(
            capture(shop, payment_id, taken, key=f"n-{round_}"), *(shop.deliver(h) for h in held_back)
        )
        assert captured.status_code == 200, captured.text
        assert all(answer.status_code < 300 for answer in notified), [a.text for a in notified]
        types = await shop.event_types(checkout.intent_id)
        assert (types.count("payment.authorized"), types.count("payment.captured")) == (1, 1), types
        assert await shop.status(checkout.intent_id) == "AUTHORIZED"
        assert (await payment(shop, payment_id))["amount_captured"] == taken
        assert await books(shop, checkout) == Money(held=0, taken=taken)
        assert shop.part == (await payment(shop, payment_id))["amount_released"]
