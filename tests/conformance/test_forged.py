"""Conformance: every return and notification shape the provider's driver knows, forged to say the
opposite of the provider. The provider decides: a browser saying "paid" of an unpaid checkout
moves nothing to AUTHORIZED; one saying "not paid" of a paid checkout authorizes it, once.
Each shape gets a fresh intent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from tests.conformance.kit import Checkout, Shop, needs_notifications, needs_read_back

# How the provider comes to say "not paid": the buyer declined, or is still on the page.
Unpaid = Callable[[Shop, Checkout], Awaitable[None]]


async def _declined(shop: Shop, checkout: Checkout) -> None:
    shop.network.hold_notifications()  # its own word arrives after the forged one, if at all
    try:
        await shop.press_only(checkout, "reject")
    finally:
        shop.network.release()


async def _still_paying(shop: Shop, checkout: Checkout) -> None:
    return None


UNPAID = pytest.mark.parametrize("unpaid", [_declined, _still_paying], ids=["declined", "still_paying"])


async def test_returns_saying_not_paid_of_a_paid_checkout_authorize_once(shop: Shop) -> None:
    probe = await shop.start()
    await shop.paid_silently(probe)
    shapes = await shop.driver.returns(shop.client, shop.runtime.cipher, shop.visit(probe), claims_paid=False)
    assert shapes, "a provider has at least one way back that says the buyer did not pay"
    for shape in shapes:
        checkout = await shop.start()
        await shop.paid_silently(checkout)
        assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION", shape.label
        forged = await shop.driver.returns(
            shop.client, shop.runtime.cipher, shop.visit(checkout), claims_paid=False
        )
        await shop.send_return(checkout.intent_id, next(f for f in forged if f.label == shape.label))
        await shop.assert_authorized_once(checkout.intent_id, shape.label)
        await shop.follow_return(checkout)  # the genuine return, late: nothing more
        await shop.assert_authorized_once(checkout.intent_id, shape.label)


@UNPAID
async def test_returns_saying_paid_of_an_unpaid_checkout_never_authorize(shop: Shop, unpaid: Unpaid) -> None:
    probe = await shop.start()
    shapes = await shop.driver.returns(shop.client, shop.runtime.cipher, shop.visit(probe), claims_paid=True)
    assert shapes, "a provider has at least one way back that says the buyer paid"
    for shape in shapes:
        checkout = await shop.start()
        await unpaid(shop, checkout)
        forged = await shop.driver.returns(
            shop.client, shop.runtime.cipher, shop.visit(checkout), claims_paid=True
        )
        await shop.send_return(checkout.intent_id, next(f for f in forged if f.label == shape.label))
        await shop.assert_not_paid(checkout.intent_id, shape.label)


SIGNED_IS_ITS_WORD = (
    "one signed with the connector's key is the provider speaking (one without it is refused: "
    "test_notifications_signed_with_another_secret_are_refused)"
)


async def test_notifications_saying_not_paid_of_a_paid_checkout_authorize_once(shop: Shop) -> None:
    needs_notifications(shop)
    needs_read_back(shop, SIGNED_IS_ITS_WORD)
    probe = await shop.start()
    await shop.paid_silently(probe)
    shapes = await shop.forged_notifications(probe, claims_paid=False)
    assert shapes, "a provider that notifies has at least one notification shape"
    for shape in shapes:
        checkout = await shop.start()
        await shop.paid_silently(checkout)
        forged = await shop.forged_notifications(checkout, claims_paid=False)
        answer = await shop.notify(next(f for f in forged if f.label == shape.label))
        assert answer.status_code == 200, (shape.label, answer.text)
        await shop.assert_authorized_once(checkout.intent_id, shape.label)
        for again in forged:  # every other shape, late: nothing more
            assert (await shop.notify(again)).status_code == 200, again.label
        await shop.assert_authorized_once(checkout.intent_id, shape.label)


@UNPAID
async def test_notifications_saying_paid_of_an_unpaid_checkout_never_authorize(
    shop: Shop, unpaid: Unpaid
) -> None:
    needs_notifications(shop)
    needs_read_back(shop, SIGNED_IS_ITS_WORD)
    checkout = await shop.start()
    await unpaid(shop, checkout)
    forged = await shop.forged_notifications(checkout, claims_paid=True)
    assert forged, "a provider that notifies has at least one notification shape"
    for shape in forged:
        answer = await shop.notify(shape)
        assert answer.status_code == 200, (shape.label, answer.text)
        await shop.assert_not_paid(checkout.intent_id, shape.label)
    if unpaid is _still_paying:  # nothing at the provider: nothing moves
        assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION"


async def test_notifications_signed_with_another_secret_are_refused(shop: Shop) -> None:
    needs_notifications(shop)
    checkout = await shop.start()
    await shop.paid_silently(checkout)
    forged = await shop.forged_notifications(checkout, claims_paid=True, secret="not-the-secret-" + "0" * 40)
    signed = [shape for shape in forged if shape.signed]
    assert signed, "a provider that notifies signs at least one shape"
    for shape in signed:
        answer = await shop.notify(shape)
        assert answer.status_code == 400, (shape.label, answer.text)
        assert set(answer.json()["error"]) == {"code", "message", "request_id", "details"}
    assert await shop.status(checkout.intent_id) == "REQUIRES_ACTION"
    await shop.assert_not_paid(checkout.intent_id)
    # The provider's own word still counts.
    await shop.follow_return(checkout)
    await shop.assert_authorized_once(checkout.intent_id)
