"""Payment links in Debian's Chromium against a live `payorch serve` (SQLite, PostgreSQL): an
admin makes a link in the dashboard (amount typed under the one amount rule), copies its address
and sees its QR code; the buyer opens it at 390 px in Spanish and in Portuguese (nothing from
another host, no CSP violation), pays through provider A (payorch's POST form, then the
simulator), lands on payorch's "paid" page; the link (max_payments 1) then answers 410 in words,
and the dashboard lists the payment; a deactivated link shows the seller's message. Screenshots
at 1280 and 390 px go to PAYORCH_E2E_SCREENSHOTS, or build/screenshots/ (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import browser as web
from tests.live import create_sandbox

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
        await admin.get_by_label("What the buyer pays for").fill("Polera talla M")
        await admin.get_by_label("Currency").select_option("CLP")
        await admin.get_by_label("Amount").fill("15,000")
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
            await web.fits_the_width(buyer, f"link-{locale}", 390)
            await buyer.screenshot(path=str(shots / f"buyer-{locale}-390.png"), full_page=True)
            assert refused == [] and violations == []

        await web.submit(buyer, "Pagar $15.000")  # es-CL: provider A, payorch's POST form first
        await web.submit(buyer, "Continuar a la página de pago")
        await buyer.click('button[name="outcome"][value="approve"]')
        await buyer.wait_for_url(f"{link_url}/done*", timeout=30_000)
        assert "Pago recibido" in await buyer.content()
        await buyer.screenshot(path=str(shots / "buyer-paid-390.png"), full_page=True)
        answer = await buyer.goto(link_url)
        assert answer is not None and answer.status == 410
        assert "Ya fue pagado." in await buyer.content()
        await buyer.screenshot(path=str(shots / "buyer-completed-390.png"), full_page=True)

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
        await buyer.screenshot(path=str(shots / "buyer-deactivated-390.png"), full_page=True)
