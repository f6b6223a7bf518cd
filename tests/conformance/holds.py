"""The conformance kit's steps for holds (capture_method manual): an intent held at the provider,
its capture and void through payorch's API, and the provider's books read by its driver."""

from __future__ import annotations

from typing import Any

import httpx

from payorch.simulator.conformance import Money
from tests.conformance.kit import Checkout, Shop
from tests.providers.helpers import create_intent


async def start_held(shop: Shop, amount: int | None = None) -> Checkout:
    """A manual-capture intent with a checkout at the shop's provider (not paid yet)."""
    created = await create_intent(
        shop.client,
        shop.sandbox,
        amount=amount or shop.amount,
        currency=shop.currency,
        capture_method="manual",
    )
    assert created["capture_method"] == "manual", created
    response = await shop.request_checkout(str(created["id"]))
    assert response.status_code == 200, response.text
    return Checkout(str(created["id"]), response.json(), capture_method="manual")


async def held(shop: Shop, amount: int | None = None) -> tuple[Checkout, str]:
    """Approved on the provider's page: the intent REQUIRES_CAPTURE; its payment id."""
    checkout = await start_held(shop, amount)
    await shop.pay(checkout, "approve")
    intent = await shop.read(checkout.intent_id)
    assert intent["status"] == "REQUIRES_CAPTURE", intent
    return checkout, str(intent["payment"]["id"])


async def payment(shop: Shop, payment_id: str) -> dict[str, Any]:
    response = await shop.client.get(f"/v1/payments/{payment_id}", headers=shop.sandbox.headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def capture(
    shop: Shop, payment_id: str, amount: int | None = None, key: str | None = None
) -> httpx.Response:
    body = {} if amount is None else {"amount": amount}
    headers = {**shop.sandbox.headers, **({"Idempotency-Key": key} if key else {})}
    answered = await shop.client.post(f"/v1/payments/{payment_id}/capture", json=body, headers=headers)
    return await shop.after_word(answered, f"/v1/payments/{payment_id}")


async def void(shop: Shop, payment_id: str, key: str | None = None) -> httpx.Response:
    headers = {**shop.sandbox.headers, **({"Idempotency-Key": key} if key else {})}
    answered = await shop.client.post(f"/v1/payments/{payment_id}/void", headers=headers)
    return await shop.after_word(answered, f"/v1/payments/{payment_id}")


async def books(shop: Shop, checkout: Checkout) -> Money:
    return await shop.driver.money(shop.client, shop.runtime.cipher, shop.visit(checkout))
