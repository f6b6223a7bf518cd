"""The dashboard's Reconciliation page in Debian's Chromium against a live `payorch serve` with its
worker (SQLite, PostgreSQL): discrepancies made through the simulator's control, the page's
button asks for the day's run, the worker carries it out, the findings to look at are listed
and one is marked resolved with a note. Screenshots at 1280 and 390 px go to
PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from tests import browser as web
from tests.kit import create_intent
from tests.live import as_sandbox, create_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

A, B = PROVIDER_A, PROVIDER_B


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url) as found:  # with its worker: it carries out the day's run
        yield found


async def intent_at_b(
    api: httpx.AsyncClient, app: dict[str, str], url: str, amount: int, provider: str = B
) -> tuple[str, str]:
    """A provider B (or ``provider``) intent with its checkout open: (its id, the page's URL)."""
    created = await create_intent(
        api,
        as_sandbox(app),
        external_reference=f"order-{amount}",
        amount=amount,
        provider=provider,
        return_url=url + "/dashboard/sandbox/returned",
    )
    intent_id = created["id"]
    checkout = (await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})).json()
    return intent_id, checkout["checkout"]["url"]


async def pay_at_a(api: httpx.AsyncClient, intent_id: str) -> None:
    """The buyer pays at provider A (the simulator's market, all approved) and returns."""
    market = {"provider": A, "approve": 1, "decline": 0, "give_up": 0, "pending": 0}
    (await api.post("/simulator/controls/market", json=market)).raise_for_status()
    bought = await api.post("/simulator/controls/market/buy", json={"payment_intent_id": intent_id})
    back = bought.json()["return"]
    await api.post(back["url"], data=back["fields"], headers={"Authorization": ""})
    assert (await api.get(f"/v1/payment-intents/{intent_id}")).json()["status"] == "AUTHORIZED"


async def discrepancy(api: httpx.AsyncClient, **body: Any) -> None:
    answer = await api.post("/simulator/controls/discrepancies", json=body)
    assert answer.status_code == 200, answer.text


async def test_the_days_findings_are_listed_and_one_is_resolved(
    server: web.Server, database_url: str
) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    day = datetime.now(UTC).date().isoformat()
    before = (datetime.now(UTC).date() - timedelta(days=1)).isoformat()
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        paid = [await intent_at_b(api, app, url, amount) for amount in (12_000, 8_500)]
        unreturned, _ = await intent_at_b(api, app, url, 4_000)
        # Provider A's 64-character token is a finding's subject: it wraps at 390 px.
        at_a = await intent_at_b(api, app, url, 7_000, provider=A)
        async with web.chromium() as browser:
            page = await web.page_at(browser)
            await web.sign_in(page, url, app["api_key"])
            await pay_at_a(api, at_a[0])
            for intent_id, checkout_url in paid:  # the buyer pays at the simulated provider
                await web.approve_at_provider(page, checkout_url, f"{url}/dashboard/payments/{intent_id}")
            await discrepancy(
                api, provider=B, kind="refunded_at_provider", payment_intent_id=paid[0][0], amount=2_000
            )
            await discrepancy(
                api, provider=B, kind="amount_changed", payment_intent_id=paid[1][0], amount=8_000
            )
            await discrepancy(api, provider=B, kind="orphan", amount=5_000)
            await discrepancy(api, provider=A, kind="refunded_at_provider", payment_intent_id=at_a[0])
            await discrepancy(api, provider=B, kind="approved_unreturned", payment_intent_id=unreturned)
            await page.get_by_role("link", name="Reconciliation").click()
            await page.get_by_label("Day (UTC)").fill(day)
            await page.get_by_role("button", name="Show").click()
            await page.get_by_text("This day has not been reconciled.").wait_for()
            await page.get_by_role("button", name=f"Reconcile {day}").click()
            await page.get_by_text("Asked for: a worker reconciles the day shortly.").wait_for()
            deadline = time.monotonic() + 120  # the worker's job runs every 30 s
            # Findings are listed as the run stores them: wait for the whole day (the
            # four to look at and the approval, applied).
            while not (
                await page.get_by_text("To look at (4)").is_visible()
                and await page.get_by_text("Applied or resolved (1)").is_visible()
            ):
                assert time.monotonic() < deadline, await page.content()
                await asyncio.sleep(2)
                await page.reload()
            # Within 390 px too: a provider's subject token wraps (it made the page 530 px wide).
            await web.screenshot(page, shots, "reconciliation", check=web.fits_the_width)
            refund = page.locator("section", has_text="Refunded at the provider outside payorch").filter(
                has_text=B
            )
            await refund.get_by_label("What was done").fill("refund booked by finance")
            await refund.get_by_role("button", name="Mark resolved").click()
            await page.get_by_text("Marked resolved.").wait_for()
            assert await page.get_by_text("To look at (3)").is_visible()
            assert await page.get_by_text("refund booked by finance").is_visible()
            await web.screenshot(page, shots, "reconciliation-resolved", check=web.fits_the_width)
            # A day before the application was created: no button; the page says the oldest day.
            await page.goto(f"{url}/dashboard/reconciliation?date={before}")
            await page.get_by_text(f"The oldest day that can be reconciled is {day} (").wait_for()
            assert await page.get_by_role("button", name=f"Reconcile {before}").count() == 0
            await web.screenshot(page, shots, "reconciliation-too-old", check=web.fits_the_width)
        report = (await api.get("/v1/reports/reconciliation", params={"date": day})).json()
        assert sorted((f["kind"], f["action"], f["status"]) for f in report["findings"]) == [
            ("amount_mismatch", "FLAGGED", "OPEN"),
            ("approved_not_recorded", "APPLIED", "RESOLVED"),
            ("approved_not_recorded", "FLAGGED", "OPEN"),
            ("refunded_outside", "FLAGGED", "OPEN"),
            ("refunded_outside", "FLAGGED", "RESOLVED"),
        ]
        assert (await api.get(f"/v1/payment-intents/{unreturned}")).json()["status"] == "AUTHORIZED"
