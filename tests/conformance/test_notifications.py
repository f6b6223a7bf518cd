"""Conformance: the provider's own notifications, held by the network and delivered late,
duplicated and out of order. Each moves the intent at most once; each event is emitted once."""

from __future__ import annotations

import asyncio

import pytest

from tests.conformance.kit import Shop, needs_notifications
from tests.conformance.network import HeldNotification


async def _deliver_all(shop: Shop, held: list[HeldNotification]) -> None:
    for notification in held:
        answer = await shop.deliver(notification)
        assert answer.status_code == 200, answer.text


async def test_duplicates_arriving_together_authorize_once(shop: Shop) -> None:
    needs_notifications(shop)
    checkout = await shop.start()
    shop.network.hold_notifications()
    await shop.press_only(checkout, "approve")
    held = shop.network.release()
    assert held, f"{shop.id} notifies: approving must send a notification"
    answers = await asyncio.gather(*(shop.deliver(n) for n in held * 3))
    assert [a.status_code for a in answers] == [200] * len(answers), [a.text for a in answers]
    await shop.assert_authorized_once(checkout.intent_id)
    await shop.follow_return(checkout)  # the buyer comes back last
    await _deliver_all(shop, held)  # and the same notifications, late
    await shop.assert_authorized_once(checkout.intent_id)


@pytest.mark.parametrize(("settled", "expected"), [("approve", "AUTHORIZED"), ("reject", "FAILED")])
async def test_out_of_order_and_late_after_in_process(shop: Shop, settled: str, expected: str) -> None:
    needs_notifications(shop)
    if "pending" not in shop.driver.page_outcomes:
        pytest.skip(f"{shop.id}'s page has no in-process outcome")
    checkout = await shop.start()
    shop.network.hold_notifications()
    await shop.press_only(checkout, "pending")
    await shop.settle(checkout.intent_id, settled)
    held = shop.network.release()
    assert held, f"{shop.id} notifies: the payment's moves must send notifications"
    # The settlement's word first, the in-process one after it, each twice.
    await _deliver_all(shop, list(reversed(held)) * 2)
    assert await shop.status(checkout.intent_id) == expected
    await shop.follow_return(checkout)  # the buyer's return from the in-process page, last
    await _deliver_all(shop, held)  # the whole story again, in order, late
    assert await shop.status(checkout.intent_id) == expected
    types = await shop.event_types(checkout.intent_id)
    # Delivered newest first, the intent went straight to its end: never back to PROCESSING.
    assert "payment.processing" not in types, types
    final = "payment.authorized" if expected == "AUTHORIZED" else "payment.failed"
    assert types.count(final) == 1 and types[-1] == final, types


async def test_a_stale_decline_after_the_retry_that_paid(shop: Shop) -> None:
    """The decline's notification arrives after the payment that followed it: it hides nothing."""
    needs_notifications(shop)
    checkout = await shop.start()
    shop.network.hold_notifications()
    try:
        declined = await shop.press_only(checkout, "reject")
        # The buyer pays: on the same page where the provider allows it, else on a new
        # checkout of the same intent (FAILED is final only once we heard of the decline).
        await shop.press_only(checkout, "approve", declined if declined.page is not None else None)
    finally:
        held = shop.network.release()
    # Whatever the provider said of the decline (provider C: no session event) comes first.
    assert held, f"{shop.id} notifies: the payment must send a notification"
    await _deliver_all(shop, list(reversed(held)))
    await shop.assert_authorized_once(checkout.intent_id)
    await _deliver_all(shop, held)
    await shop.assert_authorized_once(checkout.intent_id)
