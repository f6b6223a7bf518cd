"""The refund form in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL): what the
third attack typed on a paid USD 2,000.00 intent is refused with the rule, a refund of more than
half is confirmed in the currency's own format first, and the provider's books (the simulator's
provider B API) hold only the refunds the person meant. Screenshots at 1280 and 390 px go to
PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from payorch.crypto import Cipher
from payorch.simulator.credentials import mock_credentials
from tests.browser import CHROMIUM
from tests.kit import TEST_SECRET_KEY
from tests.live import create_sandbox, live_server, payorch_env
from tests.needs import missing

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = ((1280, 900), (390, 844))
PROVIDER_B = "provider_b_redirect_get"

REFUSED = {
    "10,50": "only separates thousands",
    "0,01": "only separates thousands",
    "1,5": "only separates thousands",
    "1_000": "is not an amount",
    "1e2": "is not an amount",
    "Infinity": "is not an amount",
    "-5": "is not an amount",
    "10.505": "has 3 decimals and USD has 2",
}


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[tuple[str, dict[str, str]]]:
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium)")
    env = payorch_env(database_url)
    with live_server(env, "--no-worker") as url:
        yield url, {**env, "PAYORCH_PUBLIC_URL": url}


async def test_the_refund_form_moves_only_what_a_person_meant(
    server: tuple[str, dict[str, str]], database_url: str
) -> None:
    from playwright.async_api import async_playwright

    url, env = server
    app = create_sandbox(env)
    backend = "postgres" if database_url.startswith("postgres") else "sqlite"
    shots = Path(os.environ.get("PAYORCH_E2E_SCREENSHOTS", ROOT / "build" / "screenshots")) / backend
    shots.mkdir(parents=True, exist_ok=True)
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api, async_playwright() as pw:
        created = await api.post(
            "/v1/payment-intents",
            json={
                "merchant_account_id": app["merchant_account_id"],
                "external_reference": "attack-usd-2000",
                "amount": 200_000,
                "currency": "USD",
                "provider": PROVIDER_B,
                "return_url": url + "/dashboard/sandbox/returned",
            },
        )
        assert created.status_code == 201, created.text
        intent_id = created.json()["id"]
        checkout = (await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})).json()
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = await (await browser.new_context(viewport={"width": 1280, "height": 900})).new_page()

            async def submit(button_name: str) -> None:
                async with page.expect_navigation():
                    await page.get_by_role("button", name=button_name).click()

            async def shoot(name: str) -> None:
                for width, height in WIDTHS:
                    await page.set_viewport_size({"width": width, "height": height})
                    await page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
                await page.set_viewport_size({"width": 1280, "height": 900})

            await page.goto(url + "/dashboard/sign-in")
            await page.get_by_label("API key").fill(app["api_key"])
            await submit("Sign in")
            await page.goto(checkout["checkout"]["url"])  # the buyer pays at the provider
            await page.click('button[name="outcome"][value="approve"]')
            intent_url = f"{url}/dashboard/payments/{intent_id}"
            await page.wait_for_url(intent_url, timeout=30_000)
            assert "AUTHORIZED" in await page.content()
            amount = page.get_by_label(re.compile("^Amount in USD"))
            assert await amount.get_attribute("aria-describedby") == "amount-rule"
            rule = await page.locator("#amount-rule").inner_text()
            assert "'.' before at most 2 decimals" in rule and "such as 1,234.56" in rule
            await shoot("refund-form")

            for typed, said in REFUSED.items():
                await page.goto(intent_url)
                await amount.fill(typed)
                await submit("Refund")
                error = await page.locator("#amount-error").inner_text()  # beside the field
                assert said in error and "such as 1,234.56" in error, (typed, error)
                assert await amount.input_value() == typed  # the form as it was sent
                assert page.url == intent_url + "/refunds"
            await shoot("refund-refused")

            # The locale's own grouping, more than half: confirmed in the currency's format first.
            await page.goto(intent_url)
            await amount.fill("1,200.50")
            await page.get_by_label("Reason").fill("damaged")
            await submit("Refund")
            assert await page.get_by_role("heading", name="Refund $1,200.50?").is_visible()
            await shoot("refund-confirm")
            await submit("Yes, refund $1,200.50")
            assert "The provider accepted the refund" in await page.content()
            await amount.fill("10.5")  # a quarter or less: no confirmation
            await submit("Refund")
            content = await page.content()
            assert "The provider accepted the refund" in content and "$1,211.00" in content
        finally:
            await browser.close()

    # The provider's own books: exactly the two refunds meant, nothing from the refused ones.
    token = mock_credentials(Cipher([TEST_SECRET_KEY]), "provider_b", app["application_id"])["access_token"]
    async with httpx.AsyncClient(base_url=url + "/simulator/provider_b", timeout=30) as provider:
        found = await provider.get(
            "/v1/payments/search",
            params={"external_reference": intent_id},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert found.status_code == 200, found.text
    [paid] = [p for p in found.json()["results"] if p["status"] == "approved"]
    assert sorted(r["amount"] for r in paid["refunds"]) == [10.5, 1200.5]
    assert paid["transaction_amount_refunded"] == 1211.0
