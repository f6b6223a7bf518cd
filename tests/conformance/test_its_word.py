"""Conformance, for a provider whose signed notification is its word (Notifications.authoritative,
docs/providers.md): a capture, void or refund it received stays pending until its word, which
then settles it once (the word again changes nothing); nothing is read back meanwhile. Other
providers confirm by reading (the rest of the kit)."""

from __future__ import annotations

import pytest

from tests.conformance.holds import held, payment
from tests.conformance.kit import Shop
from tests.kit import assert_error


@pytest.fixture(autouse=True)
def its_word_only(shop: Shop) -> None:
    if not shop.its_word:
        pytest.skip(f"{shop.id} is read back: its notifications are hints")
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")


@pytest.mark.parametrize("action", ["capture", "void"])
async def test_a_received_action_waits_for_its_word_then_settles_once(shop: Shop, action: str) -> None:
    checkout, payment_id = await held(shop)
    shop.network.hold_notifications()  # its word is late
    try:
        path = f"/v1/payments/{payment_id}/{action}"
        answered = await shop.client.post(path, json={}, headers=shop.sandbox.headers)
        assert answered.status_code == 202 and answered.json()["status"] == "REQUIRES_CAPTURE", answered.text
        other = "void" if action == "capture" else "capture"
        refused = await shop.client.post(f"/v1/payments/{payment_id}/{other}", json={}, headers=shop.sandbox.headers)
        assert_error(refused, 409, "INVALID_STATE")  # in flight until the word
    finally:
        words = shop.network.release()
    assert words, "the provider says what it did"
    assert (await payment(shop, payment_id))["status"] == "REQUIRES_CAPTURE"
    for _ in range(2):  # the word, then the same word again: applied once
        for word in words:
            assert (await shop.deliver(word)).status_code == 200
    expected = ("AUTHORIZED", "payment.captured") if action == "capture" else ("VOIDED", "payment.voided")
    assert (await payment(shop, payment_id))["status"] == expected[0]
    assert (await shop.event_types(checkout.intent_id)).count(expected[1]) == 1


async def test_a_received_refund_waits_for_its_word(shop: Shop) -> None:
    checkout, payment_id = await held(shop)
    captured = await shop.client.post(f"/v1/payments/{payment_id}/capture", json={}, headers=shop.sandbox.headers)
    assert captured.status_code in (200, 202), captured.text
    assert (await payment(shop, payment_id))["status"] == "AUTHORIZED"
    shop.network.hold_notifications()
    try:
        refund = await shop.client.post(
            f"/v1/payments/{payment_id}/refunds", json={"amount": shop.part}, headers=shop.sandbox.headers
        )
        assert refund.status_code == 202 and refund.json()["status"] == "PENDING", refund.text
    finally:
        words = shop.network.release()
    for _ in range(2):
        for word in words:
            assert (await shop.deliver(word)).status_code == 200
    listed = await shop.client.get(f"/v1/payments/{payment_id}/refunds", headers=shop.sandbox.headers)
    assert [r["status"] for r in listed.json()["items"]] == ["SUCCEEDED"]
    assert (await shop.event_types(checkout.intent_id)).count("refund.succeeded") == 1
    assert await shop.status(checkout.intent_id) == "PARTIALLY_REFUNDED"
