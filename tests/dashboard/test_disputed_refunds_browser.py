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
from tests.kit import create_intent
from tests.live import as_sandbox, create_sandbox

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
        created = await create_intent(
            api,
            as_sandbox(app),
            external_reference="disputed-usd-2000",
            amount=200_000,
            currency="USD",
            provider="provider_b_redirect_get",
            return_url=url + "/dashboard/sandbox/returned",
        )
        intent_id = created["id"]
        checkout = (await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})).json()
        page = await web.page_at(browser)
        await web.sign_in(page, url, app["api_key"])
        intent_url = f"{url}/dashboard/payments/{intent_id}"
        await web.approve_at_provider(page, checkout["checkout"]["url"], intent_url)
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
