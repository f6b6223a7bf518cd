"""The conformance kit's steps for what a provider author can get wrong about whose money it is:
a stopped checkout (the merchant's cancel, payorch's expiry) moves no money at the provider, and
one checkout's return carrying another checkout's provider reference moves nothing. Kept apart
from the test modules so that the planted-bug tests run the very same steps."""

from __future__ import annotations

from datetime import timedelta

from payorch.checkouts.expiry_job import ExpireCheckouts
from payorch.simulator.conformance import Money
from tests.checkouts.helpers import run_until_idle
from tests.conformance.holds import books, start_held
from tests.conformance.kit import Checkout, Shop, instant

# What payorch's status says the provider's books hold of a whole payment (None: nothing).
STOPPED = ("CANCELLED", "EXPIRED", "FAILED")


async def agree_with_the_books(shop: Shop, checkout: Checkout) -> str:
    """payorch's status and the provider's books say the same of ``checkout``'s money: a
    stopped intent has nothing taken or held there; its status."""
    status = await shop.status(checkout.intent_id)
    expected = {
        "AUTHORIZED": Money(held=0, taken=shop.amount),
        "REQUIRES_CAPTURE": Money(held=shop.amount, taken=0),
        **{s: Money(held=0, taken=0) for s in STOPPED},
    }
    assert status in expected, status
    found = await books(shop, checkout)
    assert found == expected[status], f"the intent is {status}, the provider's books show {found}"
    return status


async def cancel(shop: Shop, intent_id: str) -> int:
    """The merchant's ``POST .../cancel``: its HTTP status (200 cancelled, 409 the provider won)."""
    response = await shop.client.post(
        f"/v1/payment-intents/{intent_id}/cancel", json={}, headers=shop.sandbox.headers
    )
    assert response.status_code in (200, 409), response.text
    return response.status_code


async def expire(shop: Shop, checkout: Checkout) -> None:
    shop.clock.set(instant(checkout.body["expires_at"]) + timedelta(seconds=5))
    await run_until_idle(ExpireCheckouts(), shop.runtime)


async def approved_then_cancelled(shop: Shop, *, manual: bool = False) -> str:
    """The buyer approves at the page and is never heard of; the merchant then cancels. The
    provider wins (the intent paid or held, as its books say) or nothing was taken there."""
    checkout = await start_held(shop) if manual else await shop.start()
    await shop.paid_silently(checkout)
    answered = await cancel(shop, checkout.intent_id)
    await shop.deliver_late()  # its word, where the provider's notification is (it is late)
    status = await agree_with_the_books(shop, checkout)
    assert (answered == 200) == (status == "CANCELLED"), (answered, status)
    return status


async def approved_then_expired(shop: Shop) -> str:
    """The buyer approves and is never heard of; the checkout's time runs out at payorch."""
    checkout = await shop.start()
    await shop.paid_silently(checkout)
    await expire(shop, checkout)
    await shop.deliver_late()
    return await agree_with_the_books(shop, checkout)


async def another_checkouts_return(shop: Shop) -> None:
    """Two checkouts at the provider; the buyer approves one (theirs) and never comes back. Every
    return shape saying "paid" with theirs' provider references, sent to the other (mine), moves
    nothing of mine; theirs is then authorized once by its own return."""
    mine, theirs = await shop.start(), await shop.start()
    await shop.paid_silently(theirs)
    forged = await shop.driver.returns(shop.client, shop.runtime.cipher, shop.visit(theirs), claims_paid=True)
    assert forged, "a provider has at least one way back that says the buyer paid"
    for shape in forged:
        await shop.send_return(mine.intent_id, shape)
        await shop.assert_not_paid(mine.intent_id, f"{shape.label}: another checkout's reference")
        assert await shop.status(mine.intent_id) == "REQUIRES_ACTION", shape.label
    assert await books(shop, mine) == Money(held=0, taken=0)
    await shop.follow_return(theirs)
    await shop.assert_authorized_once(theirs.intent_id)
    await shop.assert_not_paid(mine.intent_id)
