"""The Exports page in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL): the
form downloads the day's payments as CSV; screenshots at 1280 and 390 px go to
PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests import browser as web
from tests.dashboard.helpers import paid_in_usd_at_b
from tests.live import create_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HYPERLINK = '=HYPERLINK("http://x","y")'


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def test_the_exports_page_downloads_a_csv(
    server: web.Server, database_url: str, tmp_path: Path
) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    today = datetime.now(UTC).date()
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api, web.chromium() as browser:
        page = await web.page_at(browser, accept_downloads=True)
        intent_id, _ = await paid_in_usd_at_b(page, api, app, url, HYPERLINK, amount=123_456)
        await page.get_by_role("link", name="Exports").click()
        await page.wait_for_url(url + "/dashboard/exports")
        assert await page.get_by_label("From (UTC)").input_value() == (today - timedelta(days=1)).isoformat()
        await page.get_by_label("Before (UTC)").fill((today + timedelta(days=1)).isoformat())
        await web.screenshot(page, shots, "exports")
        async with page.expect_download() as downloading:
            await page.get_by_role("button", name="Download").click()
        download = await downloading.value
        assert download.suggested_filename.startswith("payorch-payments-")
        target = tmp_path / download.suggested_filename
        await download.save_as(target)
    with target.open(newline="") as file:
        header, row = list(csv.reader(file))
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        intent = (await api.get(f"/v1/payment-intents/{intent_id}")).json()
    assert row[header.index("payment_id")] == intent["payment"]["id"]
    assert row[header.index("external_reference")] == "'" + HYPERLINK
    assert (row[header.index("amount")], row[header.index("amount_formatted")]) == ("123456", "$1,234.56")
