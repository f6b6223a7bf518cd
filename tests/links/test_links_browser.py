"""Payment links in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL): an
admin makes a link in the dashboard (amount typed under the one amount rule), copies its address
and sees its QR code; the buyer opens it at 390 px in Spanish and in Portuguese (nothing from
another host, no CSP violation), pays through provider A (payorch's POST form, then the
simulator), lands on payorch's "paid" page; the link (max_payments 1) then answers 410 in words,
and the dashboard lists the payment; a deactivated link shows the seller's message. A bad amount
in the create form comes back beside its field, typed text kept, nothing made. Every page (the
buyer's in Spanish and Portuguese, paid, completed, deactivated; the dashboard's empty list and
refused form) is screenshotted at 1280 and 390 px into PAYORCH_E2E_SCREENSHOTS, or
build/screenshots/ (git-ignored); "Pay" has a visible focus."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests import browser as web
from tests.live import create_sandbox

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def test_a_link_made_in_the_dashboard_paid_by_a_buyer_in_spanish(
    server: web.Server, database_url: str
) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir("links-" + web.backend(database_url))
    async with web.chromium() as browser:
        admin = await web.page_at(browser)
        await web.sign_in(admin, url, app["api_key"])
        await admin.goto(url + "/dashboard/links")
        assert "No payment link yet." in await admin.locator("table").inner_text()
        await web.screenshot(admin, shots, "links-empty", check=web.fits_the_width)
        await admin.get_by_label("What the buyer pays for").fill("Polera talla M")
        await admin.get_by_label("Currency").select_option("CLP")
        await admin.get_by_label("Amount").fill("15.000,5")  # not the one amount rule: refused
        await web.submit(admin, "Create link")
        amount_field = admin.get_by_label("Amount")
        assert await amount_field.input_value() == "15.000,5"
        assert await amount_field.get_attribute("aria-invalid") == "true"
        said = await admin.locator("#amount-error").inner_text()
        assert "is not an amount" in said and "whole CLP" in said
        assert await admin.get_by_label("What the buyer pays for").input_value() == "Polera talla M"
        assert "No payment link yet." in await admin.locator("table").inner_text()  # nothing made
        await web.screenshot(admin, shots, "link-refused", check=web.fits_the_width)
        await amount_field.fill("15,000")
        await web.submit(admin, "Create link")
        link_url = (await admin.locator("#link-url").inner_text()).strip()
        assert link_url.startswith(url + "/pay/plink_")
        qr = await admin.locator("img.qr").get_attribute("src")
        assert qr is not None and qr.startswith("data:image/svg+xml")
        assert await admin.get_by_role("button", name="Copy the address").is_visible()
        await web.screenshot(admin, shots, "link-made", check=web.fits_the_width)

        for locale, amount in (("pt-BR", "CLP 15.000"), ("es-CL", "$15.000")):
            buyer = await web.page_at(browser, web.WIDTHS[1], locale=locale)
            refused: list[str] = []
            await web.keep_to_host(buyer, url, refused)
            violations = web.csp_violations(buyer)
            await buyer.goto(link_url)
            assert await buyer.locator("html").get_attribute("lang") == locale[:2]
            assert amount in await buyer.locator(".amount").inner_text()
            await _pay_has_visible_focus(buyer)
            await web.screenshot(buyer, shots, f"buyer-{locale}", check=web.fits_the_width)
            await buyer.set_viewport_size({"width": web.WIDTHS[1][0], "height": web.WIDTHS[1][1]})
            assert refused == [] and violations == []

        await web.submit(buyer, "Pagar $15.000")  # es-CL: provider A, payorch's POST form first
        await web.submit(buyer, "Continuar a la página de pago")
        await buyer.click('button[name="outcome"][value="approve"]')
        await buyer.wait_for_url(f"{link_url}/done*", timeout=30_000)
        assert "Pago recibido" in await buyer.content()
        await web.screenshot(buyer, shots, "buyer-paid", check=web.fits_the_width)
        answer = await buyer.goto(link_url)
        assert answer is not None and answer.status == 410
        assert "Ya fue pagado." in await buyer.content()
        assert await buyer.get_by_role("heading", level=1).count() == 1
        await web.screenshot(buyer, shots, "buyer-completed", check=web.fits_the_width)

        await admin.reload()
        facts = await admin.locator("dl.facts").inner_text()
        assert "COMPLETED" in facts and "1 of 1" in facts
        assert "AUTHORIZED" in await admin.locator("table").inner_text()

        await admin.goto(url + "/dashboard/links")
        await admin.get_by_label("What the buyer pays for").fill("Zapatillas")
        await admin.get_by_label("Amount").fill("20,000")
        await web.submit(admin, "Create link")
        second = (await admin.locator("#link-url").inner_text()).strip()
        await admin.get_by_label("A message for buyers who open it (optional)").fill("Sin stock")
        await web.submit(admin, "Deactivate link")
        assert "DEACTIVATED" in await admin.locator("dl.facts").inner_text()
        answer = await buyer.goto(second)
        assert answer is not None and answer.status == 410
        text = await buyer.content()
        assert "El vendedor lo desactivó." in text and "Sin stock" in text
        await web.screenshot(buyer, shots, "buyer-deactivated", check=web.fits_the_width)


async def _pay_has_visible_focus(page: Page) -> None:
    """Tabbing to "Pay" shows where the focus is (an outline, not the browser's default none)."""
    for _ in range(10):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.classList.contains('pay')"):
            break
    outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none"), outline
