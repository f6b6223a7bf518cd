"""The Exports page in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL): the
form downloads the day's payments as CSV; screenshots at 1280 and 390 px go to
PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.browser import CHROMIUM
from tests.live import create_sandbox, live_server, payorch_env
from tests.needs import missing

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = ((1280, 900), (390, 844))
HYPERLINK = '=HYPERLINK("http://x","y")'


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[tuple[str, dict[str, str]]]:
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium)")
    env = payorch_env(database_url)
    with live_server(env, "--no-worker") as url:
        yield url, env


async def test_the_exports_page_downloads_a_csv(
    server: tuple[str, dict[str, str]], database_url: str, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright

    url, env = server
    app = create_sandbox(env)
    backend = "postgres" if database_url.startswith("postgres") else "sqlite"
    shots = Path(os.environ.get("PAYORCH_E2E_SCREENSHOTS", ROOT / "build" / "screenshots")) / backend
    shots.mkdir(parents=True, exist_ok=True)
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        created = await api.post(
            "/v1/payment-intents",
            json={
                "merchant_account_id": app["merchant_account_id"],
                "external_reference": HYPERLINK,
                "amount": 123_456,
                "currency": "USD",
                "provider": "provider_b_redirect_get",
                "return_url": url + "/dashboard/sandbox/returned",
            },
        )
        assert created.status_code == 201, created.text
        intent_id = created.json()["id"]
        checkout = (await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})).json()
    today = datetime.now(UTC).date()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = await browser.new_context(
                viewport={"width": 1280, "height": 900}, accept_downloads=True
            )
            page = await context.new_page()
            await page.goto(url + "/dashboard/sign-in")
            await page.get_by_label("API key").fill(app["api_key"])
            async with page.expect_navigation():
                await page.get_by_role("button", name="Sign in").click()
            await page.goto(checkout["checkout"]["url"])  # the buyer pays at the simulated provider
            await page.click('button[name="outcome"][value="approve"]')
            await page.wait_for_url(f"{url}/dashboard/payments/{intent_id}", timeout=30_000)
            await page.get_by_role("link", name="Exports").click()
            await page.wait_for_url(url + "/dashboard/exports")
            assert (
                await page.get_by_label("From (UTC)").input_value() == (today - timedelta(days=1)).isoformat()
            )
            await page.get_by_label("Before (UTC)").fill((today + timedelta(days=1)).isoformat())
            for width, height in WIDTHS:
                await page.set_viewport_size({"width": width, "height": height})
                await page.screenshot(path=str(shots / f"exports-{width}.png"), full_page=True)
            await page.set_viewport_size({"width": 1280, "height": 900})
            async with page.expect_download() as downloading:
                await page.get_by_role("button", name="Download").click()
            download = await downloading.value
            assert download.suggested_filename.startswith("payorch-payments-")
            target = tmp_path / download.suggested_filename
            await download.save_as(target)
        finally:
            await browser.close()
    with target.open(newline="") as file:
        header, row = list(csv.reader(file))
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        intent = (await api.get(f"/v1/payment-intents/{intent_id}")).json()
    assert row[header.index("payment_id")] == intent["payment"]["id"]
    assert row[header.index("external_reference")] == "'" + HYPERLINK
    assert (row[header.index("amount")], row[header.index("amount_formatted")]) == ("123456", "$1,234.56")
