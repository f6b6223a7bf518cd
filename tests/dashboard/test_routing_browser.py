"""The routing page in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL):
a refused program shows each check's message beside its rule, a draft is dry-run (a typed amount
refused in words, then read) and activated, a provider made to fail shows in the health of the last hour;
screenshots at 1280 and 390 px (build/screenshots/ or PAYORCH_E2E_SCREENSHOTS), each page within
the narrow width (at 390 px the tables are blocks of labelled lines: nothing scrolls sideways)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_d import PROVIDER_D
from tests import browser as web
from tests.dashboard.forms import split_program
from tests.kit import Sandbox, create_intent, each_provider_has_cases
from tests.live import as_sandbox, create_sandbox

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

A, B, C, D = PROVIDER_A, PROVIDER_B, PROVIDER_C, PROVIDER_D
MARKET = {A: 0.6, B: 0.9, C: 0.75, D: 0.5}  # each provider's buyers approve this often


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url) as found:
        yield found


async def _intent(api: httpx.AsyncClient, sandbox: Sandbox, reference: str) -> str:
    intent = await create_intent(
        api, sandbox, external_reference=reference, amount=1990, return_url="https://shop.example/r"
    )
    return str(intent["id"])


async def _market_payments(api: httpx.AsyncClient, sandbox: Sandbox, count: int) -> None:
    each_provider_has_cases(set(MARKET), "MARKET")
    for provider, approve in MARKET.items():
        body = {
            "provider": provider,
            "approve": approve,
            "decline": round(1 - approve, 2),
            "give_up": 0,
            "pending": 0,
        }
        (await api.post("/simulator/controls/market", json=body)).raise_for_status()
    for n in range(count):
        intent_id = await _intent(api, sandbox, f"r-{n}")
        (
            await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={"provider": list(MARKET)[n % len(MARKET)]})
        ).raise_for_status()
        back = (
            await api.post("/simulator/controls/market/buy", json={"payment_intent_id": intent_id})
        ).json()["return"]
        if back["method"] == "POST":
            await api.post(back["url"], data=back["fields"], headers={"Authorization": ""})
        else:
            await api.get(back["url"], headers={"Authorization": ""})


async def _fail_a(api: httpx.AsyncClient, sandbox: Sandbox) -> None:
    """A answers errors for three ``auto`` checkouts (the threshold): B takes them, A is skipped."""
    (await api.post("/simulator/controls/faults", json={"provider": A, "mode": "error"})).raise_for_status()
    for n in range(3):
        intent_id = await _intent(api, sandbox, f"f-{n}")
        (await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={})).raise_for_status()
    (await api.post("/simulator/controls/faults", json={"provider": A, "mode": "ok"})).raise_for_status()


async def test_the_routing_page_in_a_browser(server: web.Server, database_url: str) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))

    async def fits(page: Page, name: str, width: int) -> None:
        await web.fits_the_width(page, name, width)
        if width == 390:
            assert await page.evaluate("document.documentElement.scrollWidth") <= 390
        # No table scrolls inside its box either: every cell is within the page.
        hidden = await page.evaluate(
            "[...document.querySelectorAll('.routing-wrap')].filter(w => w.scrollWidth > w.clientWidth).length"
        )
        assert hidden == 0, f"{name}: {hidden} tables scroll sideways at {width} px"

    async with web.chromium() as browser:
        page = await web.page_at(browser)
        # Signed in first: A's skip (PAYORCH_PROVIDER_SKIP_SECONDS) must still hold on the page.
        await web.sign_in(page, url, app["api_key"])
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {app['api_key']}"}, timeout=30
        ) as api:
            await _market_payments(api, as_sandbox(app), 12)
            await _fail_a(api, as_sandbox(app))
        await page.goto(url + "/dashboard/overview")
        await page.get_by_role("link", name="Routing").click()
        await web.follow(page, page.locator("main a[href*='/dashboard/routing/']").first)
        assert "/dashboard/routing/" in page.url
        health = await page.locator(f"#provider-{A} td[data-label='Last hour: health']").inner_text()
        assert health.startswith("skipped 1 time") and "3 provider errors" in health, health
        assert (
            "skipped until" in await page.locator(f"#provider-{A} td[data-label='Health now']").inner_text()
        )
        program = split_program(20)  # weights add up to 90
        await page.get_by_label("Routing program").fill(json.dumps(program, indent=2))
        await web.submit(page, "Save as a draft")
        beside = page.locator("#rule-1 .field-error")
        assert "weights add up to 90" in await beside.inner_text()
        assert await page.locator("#rule-0 .field-error").count() == 0
        await web.screenshot(page, shots, "routing-refused", check=fits)

        # A draft: nothing changes until it is activated; its dry run first, amounts as typed.
        program = split_program(30)
        await page.get_by_label("Routing program").fill(json.dumps(program, indent=2))
        await web.submit(page, "Save as a draft")
        assert "Saved as draft version 1" in await page.content()
        assert await page.get_by_label("Version", exact=True).input_value() == "1"
        await page.get_by_label("Amount", exact=True).fill("150,00")
        await page.get_by_label("Currency").fill("USD")
        await web.submit(page, "Evaluate")
        refused = await page.locator("#dry-amount-error").inner_text()
        assert "'150,00' is not an amount: ',' only separates thousands here" in refused, refused
        await web.screenshot(
            page, shots, "routing-dry-run-refused", check=fits, focus=page.locator("#dry-title")
        )
        await page.get_by_label("Amount", exact=True).fill("150.00")
        await web.submit(page, "Evaluate")
        decision = await page.locator("#decision").inner_text()
        assert C in decision and "version 1" in decision, decision
        await web.screenshot(page, shots, "routing-draft", check=fits, focus=page.locator("#decision"))
        await web.submit(page, "Activate version 1")
        assert "Version activated" in await page.content()
        assert "Active: version 1" in await page.content()
        await web.screenshot(page, shots, "routing", check=fits)
