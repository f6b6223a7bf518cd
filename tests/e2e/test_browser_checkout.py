"""A real browser (headless Debian Chromium driven by Playwright) walks every registered provider
from the checkout to the return against a live server, and the intents end AUTHORIZED.

The consumer's side is played by the test: for a POST checkout it builds the HTML form from
checkout.fields and submits it; for a GET checkout it redirects the browser to checkout.url. The
shop's return_url is answered by the browser itself (route interception): no traffic leaves
127.0.0.1. Screenshots of each simulator page are kept in PAYORCH_E2E_SCREENSHOTS (or tmp).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from payorch.providers.registry import PROVIDER_IDS, registration_of
from tests import browser as web
from tests.e2e.helpers import RETURN_URL, open_checkout
from tests.kit import create_intent
from tests.live import as_sandbox, create_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


async def walk(server: web.Server, provider: str, shots: Path) -> None:
    sandbox = create_sandbox(server.env)
    headers = {"Authorization": f"Bearer {sandbox['api_key']}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as api:
        intent = await create_intent(
            api,
            as_sandbox(sandbox),
            key=f"e2e-intent-{provider}",
            external_reference=f"e2e-{provider}",
            amount=12990,
            description="Two coffees",
            return_url=RETURN_URL,
        )
        response = await api.post(
            f"/v1/payment-intents/{intent['id']}/checkout",
            json={"provider": provider},
            headers={"Idempotency-Key": f"e2e-checkout-{provider}"},
        )
        assert response.status_code == 200, response.text
        checkout = response.json()["checkout"]

        async with web.chromium() as browser:
            page = await browser.new_page()
            landed: list[str] = []

            async def shop(route):  # type: ignore[no-untyped-def]
                landed.append(route.request.url)
                await route.fulfill(status=200, content_type="text/html", body="<h1>Thanks</h1>")

            await page.route("https://shop.example/**", shop)
            await open_checkout(page, checkout)
            assert "12.990" in await page.content() or "12,990" in await page.content()
            await page.screenshot(path=str(shots / f"{provider}-checkout.png"), full_page=True)
            await page.set_viewport_size({"width": 390, "height": 844})
            await page.screenshot(path=str(shots / f"{provider}-checkout-390.png"), full_page=True)
            await page.click('button[name="outcome"][value="approve"]')
            await page.wait_for_url("https://shop.example/**", timeout=30_000)
            await page.screenshot(path=str(shots / f"{provider}-returned.png"))

        assert landed, "the browser never came back to the shop"
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed[-1]).query).items()}
        assert query["payment_intent_id"] == intent["id"]
        read = await _authorized_with_its_code(api, intent["id"])
        assert read["provider"] == provider
        if registration_of(provider).adapter.adds_status_to_return:
            assert query["status"] == "AUTHORIZED", landed


async def _authorized_with_its_code(api: httpx.AsyncClient, intent_id: str) -> dict[str, Any]:
    """The intent once its payment carries the issuer's code: a provider whose notification is
    its word may tell the code after the buyer is back (docs/providers.md)."""
    for _ in range(100):
        read: dict[str, Any] = (await api.get(f"/v1/payment-intents/{intent_id}")).json()
        assert read["status"] == "AUTHORIZED", read
        if read["payment"]["authorization_code"]:
            return read
        await asyncio.sleep(0.1)
    raise AssertionError(f"no authorization code in 10 s: {read}")


@pytest.mark.parametrize("provider", PROVIDER_IDS)
async def test_each_provider_in_a_real_browser(server: web.Server, shots: Path, provider: str) -> None:
    await walk(server, provider, shots)
