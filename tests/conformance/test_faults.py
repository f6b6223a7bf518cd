"""Conformance: the provider down (HTTP 500) or timing out. A checkout for ``auto`` fails over to
the next provider of the merchant; one that names the provider is a 503 CONNECTOR_UNAVAILABLE
that moves nothing, and works again once the provider is back."""

from __future__ import annotations

import pytest

from payorch.providers.registry import REGISTRATIONS
from tests.conformance.kit import Checkout, Shop
from tests.providers.helpers import RETURN_URL

FAULTS = pytest.mark.parametrize("fault", ["error", "timeout"])


async def _first_for_auto(shop: Shop) -> None:
    """The merchant's connectors: this provider first (priority 0), the others after it."""
    url = f"/v1/admin/merchant-accounts/{shop.sandbox.merchant_account_id}/connectors"
    response = await shop.client.patch(
        f"{url}/{await shop.connector_id()}", json={"priority": 0}, headers=shop.sandbox.headers
    )
    assert response.status_code == 200, response.text


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@FAULTS
async def test_auto_fails_over_to_the_next_provider(shop: Shop, fault: str) -> None:
    others = [r for r in REGISTRATIONS if r is not shop.provider and shop.currency in r.supported_currencies]
    if not others:
        pytest.skip("no other registered provider to fail over to")
    await _first_for_auto(shop)
    intent_id = await shop.intent()
    await shop.set_fault(fault)
    try:
        response = await shop.request_checkout(intent_id, "auto")
    finally:
        await shop.set_fault("ok")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["provider"] != shop.id and body["provider"] in {r.provider_id for r in others}
    trip = await shop.pay(Checkout(intent_id, body), "approve")
    assert trip.left_to is not None and trip.left_to.startswith(RETURN_URL), trip
    read_back = await shop.read(intent_id)
    assert read_back["status"] == "AUTHORIZED" and read_back["provider"] == body["provider"]


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@FAULTS
async def test_an_explicit_provider_down_is_503_and_moves_nothing(shop: Shop, fault: str) -> None:
    intent_id = await shop.intent()
    await shop.set_fault(fault)
    try:
        response = await shop.request_checkout(intent_id)
    finally:
        await shop.set_fault("ok")
    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert error["code"] == "CONNECTOR_UNAVAILABLE" and error["request_id"]
    assert response.headers["retry-after"] == str(error["details"]["retry_after_seconds"])
    assert shop.id in error["message"]
    assert await shop.status(intent_id) == "CREATED"
    assert await shop.event_types(intent_id) == ["payment_intent.created"]
    again = await shop.request_checkout(intent_id)  # back up: named, it is used again
    assert again.status_code == 200, again.text
    assert again.json()["provider"] == shop.id
