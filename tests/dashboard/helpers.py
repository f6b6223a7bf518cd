"""Helpers shared by the tests of this directory (the browser's set-up is in tests/browser.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from payorch.providers.provider_b import PROVIDER_B
from tests import browser as web
from tests.kit import Sandbox, create_intent
from tests.live import as_sandbox

if TYPE_CHECKING:
    from playwright.async_api import Page


async def add_mock_connector(
    client: httpx.AsyncClient, app: Sandbox, provider: str = "provider_b_redirect_get"
) -> None:
    added = await client.post(
        f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors",
        json={"provider": provider, "mode": "MOCK"},
        headers=app.headers,
    )
    assert added.status_code == 201, added.text


async def paid_in_usd_at_b(
    page: Page, api: httpx.AsyncClient, app: dict[str, str], url: str, reference: str, amount: int = 200_000
) -> tuple[str, str]:
    """A USD intent at provider B (2,000.00 unless ``amount`` says), paid by the buyer in Chromium
    once ``page`` signed in to the dashboard: (its id, its dashboard page's URL), where ``page``
    is left."""
    created = await create_intent(
        api,
        as_sandbox(app),
        external_reference=reference,
        amount=amount,
        currency="USD",
        provider=PROVIDER_B,
        return_url=url + "/dashboard/sandbox/returned",
    )
    intent_id = str(created["id"])
    checkout = (await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})).json()
    await web.sign_in(page, url, app["api_key"])
    intent_url = f"{url}/dashboard/payments/{intent_id}"
    await web.approve_at_provider(page, checkout["checkout"]["url"], intent_url)  # the buyer pays
    return intent_id, intent_url
