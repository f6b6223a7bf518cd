"""What the payment link tests share: a link's create body and its create through the API, a
buyer pressing "Pay" and paying at the simulator."""

from __future__ import annotations

from typing import Any

import httpx

from payorch.providers.registry import registration_of
from tests.kit import Sandbox
from tests.providers.browser import Browser, Trip

LINKS = "/v1/payment-links"


def link_body(app: Sandbox, **overrides: Any) -> dict[str, Any]:
    return {
        "merchant_account_id": app.merchant_account_id,
        "amount": 15000,
        "currency": "CLP",
        "description": "Polera talla M",
        **overrides,
    }


async def create_link(client: httpx.AsyncClient, app: Sandbox, **overrides: Any) -> dict[str, Any]:
    """``POST /v1/payment-links``; asserts 201."""
    answer = await client.post(LINKS, json=link_body(app, **overrides), headers=app.headers)
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


async def activity(client: httpx.AsyncClient, app: Sandbox, action: str) -> list[dict[str, Any]]:
    answer = await client.get("/v1/admin/activity", params={"action": action}, headers=app.headers)
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


async def only_provider(client: httpx.AsyncClient, app: Sandbox, provider: str) -> None:
    """Leave ``provider`` the merchant's one enabled connector: its routing can pick only it."""
    base = f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors"
    listed = await client.get(base, headers=app.headers)
    assert listed.status_code == 200, listed.text
    for connector in listed.json()["items"]:
        enabled = connector["provider"] == provider
        changed = await client.patch(
            f"{base}/{connector['id']}", json={"enabled": enabled}, headers=app.headers
        )
        assert changed.status_code == 200, changed.text


async def intents_of(client: httpx.AsyncClient, app: Sandbox) -> list[dict[str, Any]]:
    listed = await client.get("/v1/payment-intents", params={"limit": 100}, headers=app.headers)
    assert listed.status_code == 200, listed.text
    items: list[dict[str, Any]] = listed.json()["items"]
    return items


async def press_pay(client: httpx.AsyncClient, url: str, lang: str = "es") -> Trip:
    opened = await Browser(client).open(f"{url}?lang={lang}")
    assert opened.page is not None and opened.page.response.status_code == 200
    return await Browser(client).press(opened.page, "pay", "1")


async def pay_through(client: httpx.AsyncClient, url: str, provider: str, outcome: str = "approve") -> Trip:
    """The buyer presses Pay, then the outcome at the simulator; answers where they ended."""
    trip = await press_pay(client, url)
    assert trip.page is not None, trip
    if registration_of(provider).checkout_method == "POST":  # payorch's page with the form
        assert trip.page.response.status_code == 200
        assert "form-action 'self' http://testserver" in trip.page.response.headers["content-security-policy"]
        trip = await Browser(client).press(trip.page, "continue", "1")
        assert trip.page is not None, trip
    assert "/simulator/" in trip.page.url, (trip.visited, trip.page.response.text[-3000:])
    return await Browser(client).press(trip.page, "outcome", outcome)
