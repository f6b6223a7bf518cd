"""A real browser (headless Debian Chromium driven by Playwright) walks both providers from the
checkout to the return against a live server, and the intents end AUTHORIZED.

The consumer's side is played by the test: for provider A it builds the HTML form from
checkout.fields and submits it; for provider B it redirects the browser to checkout.url. The
shop's return_url is answered by the browser itself (route interception): no traffic leaves
127.0.0.1. Screenshots of each simulator page are kept in PAYORCH_E2E_SCREENSHOTS (or tmp).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

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
            await page.click('button[name="outcome"][value="approve"]')
            await page.wait_for_url("https://shop.example/**", timeout=30_000)
            await page.screenshot(path=str(shots / f"{provider}-returned.png"))

        assert landed, "the browser never came back to the shop"
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed[-1]).query).items()}
        assert query["payment_intent_id"] == intent["id"]
        read = (await api.get(f"/v1/payment-intents/{intent['id']}")).json()
        assert read["status"] == "AUTHORIZED", read
        assert read["provider"] == provider and read["payment"]["authorization_code"]
        if checkout["method"] == "GET":
            assert query["status"] == "AUTHORIZED"


async def test_provider_a_in_a_real_browser(server: web.Server, shots: Path) -> None:
    await walk(server, "provider_a_redirect_post", shots)


async def test_provider_b_in_a_real_browser(server: web.Server, shots: Path) -> None:
    await walk(server, "provider_b_redirect_get", shots)
