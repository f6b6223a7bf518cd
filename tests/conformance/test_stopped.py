"""Conformance: no money moves on a stopped checkout, and another checkout's provider reference
is refused. An intent the merchant cancelled or payorch expired leaves the provider's books with
nothing taken or held; where the buyer approved first, the provider wins and payorch's status
says what its books hold. A return carrying another checkout's references moves nothing.
tests/conformance/test_planted_stops.py shows each case failing a provider planted with the bug."""

from __future__ import annotations

import pytest

from tests.conformance.kit import Shop
from tests.conformance.stopped import (
    agree_with_the_books,
    another_checkouts_return,
    approved_then_cancelled,
    approved_then_expired,
    cancel,
    expire,
)
from tests.databases import own_database

database_url = own_database  # the expiry job sweeps the database: this module gets its own


async def test_an_unpaid_checkout_cancelled_takes_nothing(shop: Shop) -> None:
    checkout = await shop.start()
    await shop.open_page(checkout)
    assert await cancel(shop, checkout.intent_id) == 200
    assert await agree_with_the_books(shop, checkout) == "CANCELLED"


async def test_an_unpaid_checkout_expired_takes_nothing(shop: Shop) -> None:
    checkout = await shop.start()
    await expire(shop, checkout)
    assert await agree_with_the_books(shop, checkout) == "EXPIRED"


async def test_approved_then_cancelled_the_books_and_the_status_agree(shop: Shop) -> None:
    assert await approved_then_cancelled(shop) in ("AUTHORIZED", "CANCELLED")


async def test_approved_then_expired_the_books_and_the_status_agree(shop: Shop) -> None:
    assert await approved_then_expired(shop) in ("AUTHORIZED", "EXPIRED")


async def test_held_then_cancelled_the_books_and_the_status_agree(shop: Shop) -> None:
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")
    assert await approved_then_cancelled(shop, manual=True) in ("REQUIRES_CAPTURE", "CANCELLED")


async def test_another_checkouts_reference_is_refused(shop: Shop) -> None:
    await another_checkouts_return(shop)
