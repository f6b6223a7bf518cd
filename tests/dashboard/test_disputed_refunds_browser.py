"""A disputed payment's page in Debian's Chromium against a live `payorch serve` (SQLite,
PostgreSQL): a provider B payment under mediation shows the dispute and why it cannot be
refunded in place of the refund form, at 1280 and 390 px. Screenshots go to
PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests import browser as web
from tests.dashboard.helpers import paid_in_usd_at_b
from tests.live import create_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def recorded(api: httpx.AsyncClient, intent_id: str) -> None:
    """Waits until the provider's notice of the dispute has been applied (it may arrive after the
    control answered)."""
    for _ in range(100):
        intent = (await api.get(f"/v1/payment-intents/{intent_id}")).json()
        payment = (await api.get(f"/v1/payments/{intent['payment']['id']}")).json()
        if payment["dispute"] is not None:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the dispute of {intent_id} was not recorded within 10 s")


async def test_a_payment_under_mediation_says_why_it_cannot_be_refunded(
    server: web.Server, database_url: str
) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api, web.chromium() as browser:
        page = await web.page_at(browser)
        intent_id, intent_url = await paid_in_usd_at_b(page, api, app, url, "disputed-usd-2000")
        assert await page.get_by_role("button", name="Refund").is_visible()
        settled = await api.post(
            "/simulator/controls/settle", json={"payment_intent_id": intent_id, "outcome": "mediation"}
        )
        assert settled.status_code == 200, settled.text
        await recorded(api, intent_id)

        await page.goto(intent_url)
        assert "mediation OPEN" in await page.locator("#dispute").inner_text()
        why = await page.locator("#not-refundable").inner_text()
        assert why.startswith("Not refundable: a mediation is open") and "if it is won" in why
        assert await page.get_by_role("button", name="Refund").count() == 0
        await web.screenshot(
            page, shots, "refund-disputed", focus=page.locator("#not-refundable"), check=web.fits_the_width
        )
