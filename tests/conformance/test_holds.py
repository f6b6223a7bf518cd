"""Conformance: holds (capture_method manual, docs/api.md "Holding and capturing") for every
registered provider. A provider that declares holds: approved on its page is held, not taken
(REQUIRES_CAPTURE, the provider's books hold it); a partial capture takes exactly that (the rest
released) and is refunded in part; a void releases another; over-captures, a second capture
and a refund of a hold are refused. A provider that declares none is refused for manual intents
(422 CAPTURE_METHOD_NOT_SUPPORTED), and auto routing skips it, saying why."""

from __future__ import annotations

from typing import Any

import pytest

from payorch.simulator.conformance import Money
from tests.conformance.holds import books, capture, held, payment, start_held, void
from tests.conformance.kit import Shop
from tests.kit import assert_error
from tests.providers.helpers import create_intent, events_of


def needs_holds(shop: Shop) -> None:
    if shop.provider.holds is None:
        pytest.skip(f"{shop.id} declares no holds")


async def test_a_manual_intent_is_held_then_captured_in_part_then_refunded_in_part(shop: Shop) -> None:
    needs_holds(shop)
    checkout, payment_id = await held(shop)
    shown = await payment(shop, payment_id)
    assert shown["status"] == "REQUIRES_CAPTURE" and shown["capture_method"] == "manual", shown
    assert (shown["amount_capturable"], shown["amount_captured"]) == (shop.amount, 0), shown
    assert shown["capture_before"] is not None, shown
    intent = await shop.read(checkout.intent_id)
    assert intent["payment"]["capture_before"] == shown["capture_before"]
    assert await books(shop, checkout) == Money(held=shop.amount, taken=0)  # approved, not taken
    authorized = [e for e in await _events(shop, checkout.intent_id) if e["type"] == "payment.authorized"]
    assert [e["data"]["capture_method"] for e in authorized] == ["manual"]

    refund = await shop.client.post(
        f"/v1/payments/{payment_id}/refunds", json={}, headers=shop.sandbox.headers
    )
    assert "void" in assert_error(refund, 409, "INVALID_STATE")["message"]
    too_much = assert_error(await capture(shop, payment_id, shop.amount + 1), 422, "CAPTURE_AMOUNT_EXCEEDED")
    assert too_much["details"]["amount_capturable"] == shop.amount

    taken = shop.amount - shop.part
    captured = await capture(shop, payment_id, taken, key="cap-1")
    assert captured.status_code == 200, captured.text
    body = captured.json()
    assert (body["status"], body["amount_captured"], body["amount_released"]) == (
        "AUTHORIZED",
        taken,
        shop.part,
    )
    assert body["amount_capturable"] == 0
    replay = await capture(shop, payment_id, taken, key="cap-1")
    assert replay.status_code == 200 and replay.json() == body
    assert replay.headers.get("Idempotent-Replayed") == "true"
    assert_error(await capture(shop, payment_id, shop.part, key="cap-2"), 409, "INVALID_STATE")
    assert await shop.status(checkout.intent_id) == "AUTHORIZED"
    assert await books(shop, checkout) == Money(held=0, taken=taken)  # exactly what was captured
    types = await shop.event_types(checkout.intent_id)
    assert types.count("payment.captured") == 1 and types.count("payment.authorized") == 1

    more = await shop.client.post(
        f"/v1/payments/{payment_id}/refunds", json={"amount": taken + 1}, headers=shop.sandbox.headers
    )
    assert_error(more, 422, "REFUND_AMOUNT_EXCEEDED")
    part = await shop.client.post(
        f"/v1/payments/{payment_id}/refunds", json={"amount": shop.part}, headers=shop.sandbox.headers
    )
    part = await shop.refund_word(part, payment_id)
    assert part.status_code == 201 and part.json()["status"] == "SUCCEEDED", part.text
    assert await shop.status(checkout.intent_id) == "PARTIALLY_REFUNDED"
    assert await books(shop, checkout) == Money(held=0, taken=taken - shop.part)
    rest = await shop.client.post(f"/v1/payments/{payment_id}/refunds", json={}, headers=shop.sandbox.headers)
    rest = await shop.refund_word(rest, payment_id)
    assert rest.status_code == 201 and rest.json()["amount"] == taken - shop.part, rest.text
    assert await shop.status(checkout.intent_id) == "REFUNDED"


async def test_a_void_releases_the_hold(shop: Shop) -> None:
    needs_holds(shop)
    checkout, payment_id = await held(shop)
    voided = await void(shop, payment_id, key="void-1")
    assert voided.status_code == 200, voided.text
    body = voided.json()
    assert (body["status"], body["amount_captured"], body["amount_released"]) == ("VOIDED", 0, shop.amount)
    assert await shop.status(checkout.intent_id) == "CANCELLED"
    assert await books(shop, checkout) == Money(held=0, taken=0)
    assert (await shop.event_types(checkout.intent_id)).count("payment.voided") == 1
    assert_error(await void(shop, payment_id, key="void-2"), 409, "INVALID_STATE")
    assert_error(await capture(shop, payment_id), 409, "INVALID_STATE")


async def test_a_whole_capture_without_an_amount(shop: Shop) -> None:
    needs_holds(shop)
    checkout, payment_id = await held(shop)
    captured = await capture(shop, payment_id)
    assert captured.status_code == 200, captured.text
    assert (captured.json()["amount_captured"], captured.json()["amount_released"]) == (shop.amount, 0)
    assert await books(shop, checkout) == Money(held=0, taken=shop.amount)


async def test_an_automatic_intent_is_taken_at_once(shop: Shop) -> None:
    checkout = await shop.start()
    await shop.pay(checkout, "approve")
    intent = await shop.read(checkout.intent_id)
    assert intent["status"] == "AUTHORIZED" and intent["capture_method"] == "automatic"
    assert await books(shop, checkout) == Money(held=0, taken=shop.amount)
    shown = await payment(shop, str(intent["payment"]["id"]))
    assert (shown["amount_captured"], shown["amount_capturable"], shown["capture_before"]) == (
        shop.amount,
        0,
        None,
    )
    assert_error(await capture(shop, shown["id"]), 409, "INVALID_STATE")


async def test_a_provider_without_holds_is_refused_for_manual(shop: Shop) -> None:
    if shop.provider.holds is not None:
        pytest.skip(f"{shop.id} declares holds")
    refused = await shop.client.post(
        "/v1/payment-intents",
        json={
            "merchant_account_id": shop.sandbox.merchant_account_id,
            "external_reference": "hold-1",
            "amount": shop.amount,
            "currency": shop.currency,
            "return_url": "https://shop.example/return",
            "provider": shop.id,
            "capture_method": "manual",
        },
        headers=shop.sandbox.headers,
    )
    error = assert_error(refused, 422, "CAPTURE_METHOD_NOT_SUPPORTED")
    assert shop.id in error["message"] and "cannot hold" in error["message"]
    created = await create_intent(
        shop.client, shop.sandbox, amount=shop.amount, currency=shop.currency, capture_method="manual"
    )
    explicit = await shop.request_checkout(str(created["id"]), shop.id)
    assert_error(explicit, 422, "CAPTURE_METHOD_NOT_SUPPORTED")
    routed = await shop.client.post(
        f"/v1/payment-intents/{created['id']}/checkout", json={}, headers=shop.sandbox.headers
    )
    assert routed.status_code == 200, routed.text
    skipped = routed.json()["routing"]["skipped"]
    assert {"provider": shop.id, "reason": "capture_method"} in [
        {"provider": s["provider"], "reason": s["reason"]} for s in skipped
    ], skipped
    assert routed.json()["provider"] != shop.id


async def test_a_manual_checkout_skips_nothing_that_holds(shop: Shop) -> None:
    needs_holds(shop)
    checkout = await start_held(shop)
    assert checkout.body["provider"] == shop.id


async def _events(shop: Shop, intent_id: str) -> list[dict[str, Any]]:
    return await events_of(shop.runtime, intent_id)
