"""The payments list, an intent, the overview, the webhooks form and the 404 page in Debian's
Chromium at 1280 and 390 px against a live `payorch serve` (SQLite, PostgreSQL): nothing wider
than the screen, ids never split inside a word, the navigation a tidy grid with visible focus,
the filters' select and a bad filter told beside its field. Screenshots go to build/screenshots/
(or PAYORCH_E2E_SCREENSHOTS) as pages-*-{1280,390}.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from payorch.providers.registry import PROVIDER_IDS
from tests import browser as web
from tests.kit import Sandbox, create_intent
from tests.live import as_sandbox, create_sandbox

if TYPE_CHECKING:  # the browser's package is imported by the test that runs it
    from playwright.async_api import Page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LONG_REFERENCE = "order-2026-11-28-customer-with-a-rather-long-reference-0042"


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url) as found:
        yield found


async def paid_intents(api: httpx.AsyncClient, sandbox: Sandbox) -> list[str]:
    """One intent paid at each provider (the simulator's market approves all), the last with a
    long reference, and one left open; the ids, newest last."""
    made = []
    for n, provider in enumerate((*PROVIDER_IDS, "")):
        reference = LONG_REFERENCE if n == len(PROVIDER_IDS) - 1 else f"order-{n}"
        intent = await create_intent(
            api, sandbox, external_reference=reference, amount=12990, return_url="https://shop.example/r"
        )
        intent_id = intent["id"]
        made.append(intent_id)
        if not provider:
            continue
        market = {"provider": provider, "approve": 1, "decline": 0, "give_up": 0, "pending": 0}
        (await api.post("/simulator/controls/market", json=market)).raise_for_status()
        checkout = await api.post(f"/v1/payment-intents/{intent_id}/checkout", json={"provider": provider})
        checkout.raise_for_status()
        back = (
            await api.post("/simulator/controls/market/buy", json={"payment_intent_id": intent_id})
        ).json()
        ret = back["return"]
        if ret["method"] == "POST":
            await api.post(ret["url"], data=ret["fields"], headers={"Authorization": ""})
        else:
            await api.get(ret["url"], headers={"Authorization": ""})
    return made


async def split_words(page: Page, selector: str) -> list[str]:
    """The words (runs of text without a space, between two <wbr>) under ``selector`` that take
    more than one line: an id or event name split inside a word."""
    script = """selector => {
        const split = [];
        for (const root of document.querySelectorAll(selector)) {
            const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                for (const match of node.textContent.matchAll(/\\S+/g)) {
                    const range = document.createRange();
                    range.setStart(node, match.index);
                    range.setEnd(node, match.index + match[0].length);
                    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                    if (tops.size > 1) split.push(match[0]);
                }
            }
        }
        return split;
    }"""
    found: list[str] = await page.evaluate(script, selector)
    return found


async def test_pages_at_1280_and_390_px(server: web.Server, database_url: str) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        made = await paid_intents(api, as_sandbox(app))
        intent = (await api.get(f"/v1/payment-intents/{made[0]}")).json()
        assert intent["status"] == "AUTHORIZED", intent
        refund = await api.post(f"/v1/payments/{intent['payment']['id']}/refunds", json={"amount": 990})
        assert refund.status_code == 201, refund.text

    async def shoot(page: Page, name: str) -> None:
        async def fits(page: Page, _: str, width: int) -> None:
            await web.fits_the_width(page, name, width)  # named without the files' prefix

        await web.screenshot(page, shots, f"pages-{name}", check=fits)

    async with web.chromium() as browser:
        page = await web.page_at(browser)
        await web.sign_in(page, url, app["api_key"])

        # The payments list: at 390 px each row is reference and amount, id and status,
        # provider and time; the id on one line, cut with an ellipsis, whole in its title.
        await page.goto(url + "/dashboard/payments")
        await shoot(page, "payments")
        await page.set_viewport_size({"width": 390, "height": 844})
        first = page.locator("table.stack tbody tr").first
        assert await first.locator(".c-ref").inner_text() == f"order-{len(PROVIDER_IDS)}"  # newest first
        for link in await page.locator("table.stack a.mono").all():
            height = await link.evaluate("a => a.getBoundingClientRect().height")
            assert height < 24, await link.get_attribute("title")  # one line, never split
            assert (await link.get_attribute("title") or "").startswith("payi_")
        ref_top, amount_top = [
            (await first.locator(cell).bounding_box() or {"y": -1})["y"] for cell in (".c-ref", ".c-amount")
        ]
        assert ref_top == amount_top  # reference and amount side by side, first
        shown = "[...document.querySelectorAll('table.stack th')].filter(th => th.getBoundingClientRect().right > 0)"
        assert await page.evaluate(f"{shown}.length") == 0  # the headers are for screen readers

        # The navigation at 390 px: a grid of three links a row (an owner sees eleven pages, so
        # four rows), each link tappable, focus visible.
        links = await page.locator("nav a").all()
        tops = {round((await a.bounding_box() or {"y": 0})["y"]) for a in links}
        assert len(tops) <= -(-len(links) // 3), (len(links), tops)
        await page.locator("nav a").first.focus()
        outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none"

        # The provider filter is a select of this build's providers; a bad date is told beside
        # its field in the same form, the choice kept.
        await page.set_viewport_size({"width": 1280, "height": 900})
        await page.get_by_label("Provider").select_option(PROVIDER_IDS[1])
        await page.get_by_label("Created from (UTC)").fill("yesterday")
        await web.submit(page, "Show payments")
        assert await page.locator("#from-error").inner_text() != ""
        assert await page.get_by_label("Provider").input_value() == PROVIDER_IDS[1]
        assert await page.get_by_label("Created from (UTC)").get_attribute("aria-invalid") == "true"
        await shoot(page, "payments-bad-filter")
        await page.get_by_label("Created from (UTC)").fill("")
        await web.submit(page, "Show payments")
        assert await page.locator("table.stack a.mono").count() == 1

        # The intent with a refund: the refund table and the form under it apart.
        await page.goto(f"{url}/dashboard/payments/{made[0]}")
        await shoot(page, "intent")
        await page.set_viewport_size({"width": 390, "height": 844})
        assert await split_words(page, "main .mono, main code") == []
        await page.set_viewport_size({"width": 1280, "height": 900})
        table = await page.locator("section[aria-labelledby='payment-title'] .table-wrap").bounding_box()
        form = await page.locator("section[aria-labelledby='payment-title'] form.card").bounding_box()
        assert table and form and form["y"] - (table["y"] + table["height"]) >= 12

        await page.goto(url + "/dashboard/overview")
        assert await page.locator(".y-axis .tick").count() == 5
        await shoot(page, "overview")
        await page.goto(url + "/dashboard/webhooks")
        await shoot(page, "webhooks")
        await page.set_viewport_size({"width": 390, "height": 844})
        assert await split_words(page, ".check label") == []  # event names
        await page.set_viewport_size({"width": 1280, "height": 900})
        # A refused test payment: the sandbox form again, the message beside the amount.
        await page.goto(url + "/dashboard/sandbox")
        await page.get_by_label("Amount").fill("10,50")
        await page.get_by_label("Currency").fill("USD")
        await web.submit(page, "Make a test payment")
        assert "only separates thousands" in await page.locator("#amount-error").inner_text()
        assert await page.get_by_label("Amount").input_value() == "10,50"
        await shoot(page, "sandbox-refused")
        await page.goto(url + "/dashboard/no-such-page")
        assert await page.get_by_role("navigation", name="Dashboard").count() == 1
        await shoot(page, "not-found")
