"""The conformance kit's steps for each hold capability a provider declares (its registration's
``HoldSupport``): partial capture, how many captures, void, and the window before a hold lapses.
Each step does what the declaration promises, or checks that payorch refuses what it does not
promise, and reads the provider's own books: a declaration the provider does not keep fails it.
Kept apart from the test modules so that the planted-declaration tests run the very same steps."""

from __future__ import annotations

from datetime import timedelta

from payorch.providers.registration import HoldSupport
from payorch.simulator.conformance import Money
from tests.conformance.holds import books, capture, held, payment, void
from tests.conformance.kit import Shop, instant
from tests.kit import assert_error

DAY = 24 * 3600


def declared(shop: Shop) -> HoldSupport:
    assert shop.provider.holds is not None
    return shop.provider.holds


async def partial_capture(shop: Shop) -> None:
    """Declared: a capture of less than held takes exactly that and releases the rest. Not
    declared: payorch refuses it (422) and the hold stays whole at the provider."""
    checkout, payment_id = await held(shop)
    taken = shop.amount - shop.part
    answer = await capture(shop, payment_id, taken)
    if not declared(shop).partial_capture:
        assert_error(answer, 422, "CAPTURE_AMOUNT_EXCEEDED")
        assert await books(shop, checkout) == Money(held=shop.amount, taken=0)
        return
    assert answer.status_code == 200, answer.text
    assert (answer.json()["amount_captured"], answer.json()["amount_released"]) == (taken, shop.part)
    assert await books(shop, checkout) == Money(held=0, taken=taken), "a partial capture took another amount"


async def captures(shop: Shop) -> None:
    """As many captures of one hold as declared (each a piece, where partial captures are
    declared; else the whole), each taken at the provider; one more is refused and moves nothing."""
    support = declared(shop)
    checkout, payment_id = await held(shop)
    piece = shop.part // support.max_captures if support.partial_capture else None
    for number in range(support.max_captures):
        answer = await capture(shop, payment_id, piece, key=f"capture-{number}")
        assert answer.status_code == 200, f"capture {number + 1} of {support.max_captures}: {answer.text}"
    taken = piece * support.max_captures if piece is not None else shop.amount
    assert (await payment(shop, payment_id))["amount_captured"] == taken
    assert (await books(shop, checkout)).taken == taken, "the provider took another amount"
    one_more = await capture(shop, payment_id, piece, key="capture-one-more")
    assert one_more.status_code in (409, 422), one_more.text
    assert (await books(shop, checkout)).taken == taken


async def voiding(shop: Shop) -> None:
    """Declared: a void releases the whole hold at the provider. Not declared: payorch refuses it
    (409) and the hold stays at the provider."""
    checkout, payment_id = await held(shop)
    answer = await void(shop, payment_id)
    if not declared(shop).void:
        assert_error(answer, 409, "INVALID_STATE")
        assert await books(shop, checkout) == Money(held=shop.amount, taken=0)
        return
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "VOIDED"
    assert await books(shop, checkout) == Money(held=0, taken=0), "the void left money at the provider"


async def window(shop: Shop) -> None:
    """The hold's ``capture_before`` is the declared window after its authorization, and the
    provider keeps it that long: held an hour before, lapsed (nothing held or taken) an hour after
    (the simulator's clock control moves only its holds' clock)."""
    days = declared(shop).window_days
    checkout, payment_id = await held(shop)
    shown = await payment(shop, payment_id)
    lasts = instant(shown["capture_before"]) - instant(shown["authorized_at"])
    assert abs(lasts - timedelta(days=days)) <= timedelta(minutes=1), (
        f"held for {lasts}, declared {days} days"
    )
    await _advance(shop, days * DAY - 3600)
    assert await books(shop, checkout) == Money(held=shop.amount, taken=0), (
        "lapsed before its declared window"
    )
    await _advance(shop, 2 * 3600)
    assert await books(shop, checkout) == Money(held=0, taken=0), "still held after its declared window"


async def _advance(shop: Shop, seconds: int) -> None:
    response = await shop.client.post(
        "/simulator/controls/clock",
        json={"advance_seconds": seconds, "provider": shop.id},
        headers=shop.sandbox.headers,
    )
    assert response.status_code == 200, response.text
