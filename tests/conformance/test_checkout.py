"""Conformance: the buyer's trip. Checkout created and opened, approve, decline (and the retry on
the same page where the provider allows it), the buyer gives up, left in process then settled."""

from __future__ import annotations

from datetime import timedelta

import pytest

from payorch.simulator.conformance import PAGE_OUTCOMES
from tests.conformance.kit import Shop, instant
from tests.providers.helpers import RETURN_URL, events_of, query_of


async def test_checkout_is_created_and_its_page_opens(shop: Shop) -> None:
    # The kit charges what the driver declares, and only what the provider takes.
    assert shop.currency in shop.provider.supported_currencies
    checkout = await shop.start()
    body = checkout.body
    assert body["payment_intent_id"] == checkout.intent_id
    assert body["status"] == "REQUIRES_ACTION" and body["provider"] == shop.id
    action = body["checkout"]
    assert action["type"] == "REDIRECT" and action["method"] == shop.provider.checkout_method
    assert action["url"].startswith(f"http://testserver/simulator/{shop.provider.simulator_name}/")
    assert (action["fields"] == {}) == (action["method"] == "GET")
    now = shop.clock.now()
    ttl = timedelta(seconds=shop.runtime.settings.checkout_ttl_seconds)
    assert now < instant(body["expires_at"]) <= now + ttl  # the provider may only shorten it
    started = (await events_of(shop.runtime, checkout.intent_id))[-1]
    assert started["type"] == "payment.checkout.started"
    data = dict(started["data"])
    assert data.pop("routing")["chosen"] == shop.id  # why this provider (docs/routing.md)
    intent = await shop.read(checkout.intent_id)
    about = {"external_reference": intent["external_reference"], "metadata": intent["metadata"]}
    assert data == {"payment_intent_id": checkout.intent_id, **about, "provider": shop.id}

    trip = await shop.open_page(checkout)
    assert trip.page is not None and trip.page.response.status_code == 200, trip
    offered = {v for form in trip.page.forms for n, v in form.buttons if n == "outcome"}
    # The driver's page_outcomes decide which cases run: they must be what the page offers.
    assert offered & set(PAGE_OUTCOMES) == shop.driver.page_outcomes
    assert {"approve", "reject", "cancel"} <= shop.driver.page_outcomes


async def test_approve_authorizes_once_and_returns_to_the_shop(shop: Shop) -> None:
    checkout = await shop.start()
    trip = await shop.pay(checkout, "approve")
    assert trip.left_to is not None and trip.left_to.startswith(RETURN_URL), trip
    expected = {"order": "1", "payment_intent_id": checkout.intent_id}
    if shop.provider.adapter.adds_status_to_return:
        expected["status"] = "AUTHORIZED"
    assert query_of(trip.left_to) == expected
    read_back = await shop.read(checkout.intent_id)
    assert read_back["status"] == "AUTHORIZED" and read_back["provider"] == shop.id
    payment = read_back["payment"]
    assert payment["status"] == "AUTHORIZED" and payment["id"].startswith("pay_")
    assert await shop.event_types(checkout.intent_id) == [
        "payment_intent.created",
        "payment.checkout.started",
        "payment.authorized",
    ]
    authorized = (await events_of(shop.runtime, checkout.intent_id))[-1]
    assert authorized["data"] == {
        "payment_intent_id": checkout.intent_id,
        "external_reference": read_back["external_reference"],
        "metadata": read_back["metadata"],
        "payment_id": payment["id"],
        "provider": shop.id,
        "amount": shop.amount,
        "currency": shop.currency,
        "capture_method": "automatic",  # taken: no capture_before
    }
    await shop.assert_authorized_once(checkout.intent_id)


async def test_decline(shop: Shop) -> None:
    checkout = await shop.start()
    trip = await shop.pay(checkout, "reject")
    if shop.driver.decline_retries_on_page:
        # Declined, still on the provider's page: nothing moved, and the buyer tries again there.
        assert trip.left_to is None and trip.page is not None, trip
        assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION"
        await shop.assert_not_paid(checkout.intent_id)
        again = await shop.pay(checkout, "approve", trip)
        assert again.left_to is not None and again.left_to.startswith(RETURN_URL), again
        await shop.assert_authorized_once(checkout.intent_id)
        return
    assert trip.left_to is not None and trip.left_to.startswith(RETURN_URL), trip
    assert await shop.status(checkout.intent_id) == "FAILED"
    failed = (await events_of(shop.runtime, checkout.intent_id))[-1]
    assert failed["type"] == "payment.failed" and failed["data"]["provider"] == shop.id
    assert failed["data"]["reason"]
    # FAILED is final: the old page takes no payment that counts.
    page = (await shop.open_page(checkout)).page
    if page is not None and page.response.status_code == 200:
        if any(("outcome", "approve") in form.buttons for form in page.forms):
            await shop.pay(checkout, "approve")
    await shop.assert_not_paid(checkout.intent_id)
    assert await shop.status(checkout.intent_id) == "FAILED"


async def test_a_decline_whose_notification_comes_after_the_buyer(shop: Shop) -> None:
    """The buyer is back at the shop before the provider's notification of the refusal (it is
    late, or sent again later): the intent fails when the provider's word comes, even for a
    provider whose page leaves the session payable after a refusal; the word again moves
    nothing."""
    if shop.driver.decline_retries_on_page:
        pytest.skip(f"{shop.id}'s page keeps the buyer after a decline")
    checkout = await shop.start()
    shop.network.hold_notifications()
    try:
        await shop.press_only(checkout, "reject")
        assert checkout.returned_to is not None, "a decline sends the buyer back"
        await shop.follow_return(checkout)
    finally:
        late = shop.network.release()
    if shop.its_word:
        assert late, f"{shop.id} says what happened by its notification"
        # Nothing was read back yet: the buyer's return alone is no refusal.
        assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION"
    for _ in range(2):
        for held in late:
            assert (await shop.deliver(held)).status_code == 200, held.path
        assert await shop.status(checkout.intent_id) == "FAILED"
    types = [e["type"] for e in await events_of(shop.runtime, checkout.intent_id)]
    assert types.count("payment.failed") == 1, types
    await shop.assert_not_paid(checkout.intent_id)


async def test_an_approval_whose_notification_comes_after_the_buyer(shop: Shop) -> None:
    """Paid, the buyer back before the provider's notification: authorized once, and what only
    the notification says (a provider whose notification is its word: the issuer's
    authorization code) is on the payment once it comes."""
    checkout = await shop.start()
    shop.network.hold_notifications()
    try:
        await shop.press_only(checkout, "approve")
        await shop.follow_return(checkout)
    finally:
        late = shop.network.release()
    assert await shop.status(checkout.intent_id) == "AUTHORIZED"
    for _ in range(2):
        for held in late:
            assert (await shop.deliver(held)).status_code == 200, held.path
    intent = await shop.read(checkout.intent_id)
    assert intent["status"] == "AUTHORIZED" and intent["payment"]["authorization_code"], intent
    await shop.assert_authorized_once(checkout.intent_id)


async def test_the_buyer_gives_up(shop: Shop) -> None:
    checkout = await shop.start()
    trip = await shop.pay(checkout, "cancel")
    assert trip.left_to is not None and trip.left_to.startswith(RETURN_URL), trip
    assert query_of(trip.left_to)["payment_intent_id"] == checkout.intent_id
    assert await shop.status(checkout.intent_id) == "CANCELLED"
    cancelled = (await events_of(shop.runtime, checkout.intent_id))[-1]
    assert cancelled["type"] == "payment.cancelled" and cancelled["data"]["reason"]
    await shop.assert_not_paid(checkout.intent_id)


@pytest.mark.parametrize(("settled", "expected"), [("approve", "AUTHORIZED"), ("reject", "FAILED")])
async def test_left_in_process_then_settled(shop: Shop, settled: str, expected: str) -> None:
    if "pending" not in shop.driver.page_outcomes:
        pytest.skip(f"{shop.id}'s page has no in-process outcome")
    checkout = await shop.start()
    trip = await shop.pay(checkout, "pending")
    assert trip.left_to is not None and trip.left_to.startswith(RETURN_URL), trip
    assert await shop.status(checkout.intent_id) == "PROCESSING"
    processing = (await events_of(shop.runtime, checkout.intent_id))[-1]
    assert processing["type"] == "payment.processing" and processing["data"]["provider"] == shop.id
    await shop.settle(checkout.intent_id, settled)  # the provider then tells us, as it would
    assert await shop.status(checkout.intent_id) == expected
    types = await shop.event_types(checkout.intent_id)
    assert types.count("payment.processing") == 1
    if expected == "AUTHORIZED":
        await shop.assert_authorized_once(checkout.intent_id)
    else:
        assert types[-1] == "payment.failed"
        await shop.assert_not_paid(checkout.intent_id)
