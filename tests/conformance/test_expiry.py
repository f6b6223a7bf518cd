"""Conformance: a checkout's time runs out and the expiry job asks the provider first: unpaid, it
is stopped at the provider and EXPIRED; paid without a word to us, it is AUTHORIZED; the
provider down, it waits."""

from __future__ import annotations

from datetime import timedelta

from payorch.checkouts.expiry_job import ExpireCheckouts
from payorch.checkouts.reconcile_processing import ReconcileProcessing
from tests.checkouts.helpers import run_until_idle
from tests.conformance.kit import Checkout, Shop, instant, needs_read_back
from tests.databases import own_database

database_url = own_database  # the expiry job sweeps the database: this module gets its own


async def _expire(shop: Shop, checkout: Checkout, after: float = 5) -> None:
    shop.clock.set(instant(checkout.body["expires_at"]) + timedelta(seconds=after))
    await run_until_idle(ExpireCheckouts(), shop.runtime)


async def test_an_unpaid_checkout_expires_and_can_no_longer_be_paid(shop: Shop) -> None:
    checkout = await shop.start()
    await run_until_idle(ExpireCheckouts(), shop.runtime)
    assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION"  # not due yet
    await _expire(shop, checkout)
    assert await shop.status(checkout.intent_id) == "EXPIRED"
    assert (await shop.event_types(checkout.intent_id))[-1] == "payment.expired"
    # The provider's clock 30 s behind ours: only the stop, not the checkout's own end, refuses.
    ends = instant(checkout.body["expires_at"])
    shop.clock.set(ends - timedelta(seconds=30))
    page = (await shop.open_page(checkout)).page
    if page is not None and page.response.status_code == 200:
        if any(("outcome", "approve") in form.buttons for form in page.forms):
            await shop.pay(checkout, "approve")
    shop.clock.set(ends + timedelta(seconds=60))
    await run_until_idle(ReconcileProcessing(), shop.runtime)
    assert await shop.status(checkout.intent_id) == "EXPIRED"
    await shop.assert_not_paid(checkout.intent_id)


async def test_a_checkout_paid_without_a_word_to_us_is_authorized_not_expired(shop: Shop) -> None:
    needs_read_back(shop, "a payment it has not yet told of cannot be read at expiry; told late, it is given back (test_stopped)")
    checkout = await shop.start()
    await shop.paid_silently(checkout)
    await _expire(shop, checkout)
    await shop.assert_authorized_once(checkout.intent_id)
    assert "payment.expired" not in await shop.event_types(checkout.intent_id)
    await shop.follow_return(checkout)
    await shop.assert_authorized_once(checkout.intent_id)


async def test_expiry_waits_while_the_provider_is_down(shop: Shop) -> None:
    needs_read_back(shop, "expiry asks the provider nothing (its words are kept at payorch)")
    checkout = await shop.start()
    await shop.set_fault("error")
    try:
        await _expire(shop, checkout)
        assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION"
    finally:
        await shop.set_fault("ok")
    shop.clock.advance(16)
    await run_until_idle(ExpireCheckouts(), shop.runtime)
    assert await shop.status(checkout.intent_id) == "EXPIRED"
