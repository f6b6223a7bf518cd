"""The refund form in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL): what the
third attack typed on a paid USD 2,000.00 intent is refused with the rule, more than is left
(2,000.01) is refused in dollars before any confirmation, a refund of more than half is confirmed in the currency's own format first, and the provider's books (the simulator's
provider B API) hold only the refunds the person meant. Screenshots at 1280 and 390 px go to
PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from payorch.crypto import Cipher
from payorch.simulator.credentials import mock_credentials
from tests import browser as web
from tests.dashboard.helpers import paid_in_usd_at_b
from tests.kit import TEST_SECRET_KEY
from tests.live import create_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

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
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def test_the_refund_form_moves_only_what_a_person_meant(server: web.Server, database_url: str) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api, web.chromium() as browser:
        page = await web.page_at(browser)
        intent_id, intent_url = await paid_in_usd_at_b(page, api, app, url, "attack-usd-2000")
        assert "AUTHORIZED" in await page.content()
        amount = page.get_by_label(re.compile("^Amount in USD"))
        assert await amount.get_attribute("aria-describedby") == "amount-rule"
        rule = await page.locator("#amount-rule").inner_text()
        assert "'.' before at most 2 decimals" in rule and "such as 1,234.56" in rule
        await web.screenshot(page, shots, "refund-form")

        for typed, said in REFUSED.items():
            await page.goto(intent_url)
            await amount.fill(typed)
            await web.submit(page, "Refund")
            error = await page.locator("#amount-error").inner_text()  # beside the field
            assert said in error and "such as 1,234.56" in error, (typed, error)
            assert await amount.input_value() == typed  # the form as it was sent
            assert page.url == intent_url + "/refunds"
        await web.screenshot(page, shots, "refund-refused")

        # More than was paid: refused before any confirmation, in dollars, not minor units.
        await page.goto(intent_url)
        await amount.fill("2,000.01")
        await web.submit(page, "Refund")
        error = await page.locator("#amount-error").inner_text()
        assert "$2,000.01 is more than is left. At most $2,000.00 is left to refund" in error, error
        assert "200000" not in error and "Refund $2,000.01?" not in await page.content()
        await web.screenshot(page, shots, "refund-more-than-left", check=web.fits_the_width)

        # The locale's own grouping, more than half: confirmed in the currency's format first.
        await page.goto(intent_url)
        await amount.fill("1,200.50")
        await page.get_by_label("Reason").fill("damaged")
        await web.submit(page, "Refund")
        assert await page.get_by_role("heading", name="Refund $1,200.50?").is_visible()
        await web.screenshot(page, shots, "refund-confirm")
        await web.submit(page, "Yes, refund $1,200.50")
        assert "The provider accepted the refund" in await page.content()
        await amount.fill("10.5")  # a quarter or less: no confirmation
        await web.submit(page, "Refund")
        content = await page.content()
        assert "The provider accepted the refund" in content and "$1,211.00" in content

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
