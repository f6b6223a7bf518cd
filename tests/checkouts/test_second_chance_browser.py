"""The second-chance page in Debian's Chromium against a live `payorch serve` (SQLite,
PostgreSQL): the merchant routes B, then C, with on_decline; the buyer is declined at B's page
(its "reject": cc_rejected_other_reason, retryable), lands on payorch's page at 390 px in Spanish
and at 1280 px in English (nothing from another host, no CSP violation, nothing wider than the
screen), presses its one button and pays at C; every page at both widths, and an offer the expiry job
ended (410, in words, with the way back to the shop). Screenshots go to PAYORCH_E2E_SCREENSHOTS, or
build/screenshots/ (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import update

from payorch.db import Database
from payorch.db.tables import payment_intents
from tests import browser as web
from tests.live import create_sandbox
from tests.providers.helpers import A, B
from tests.routing.helpers import C

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def _declined_at_b(url: str, app: dict[str, str], locale: str) -> tuple[str, str]:
    """A new intent whose first checkout goes to B; answer its id and B's page."""
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api:
        body = {
            "merchant_account_id": app["merchant_account_id"],
            "external_reference": f"order-{locale}",
            "amount": 15000,
            "currency": "CLP",
            "return_url": f"{url}/healthz",
        }
        intent = (await api.post("/v1/payment-intents", json=body)).json()
        started = await api.post(f"/v1/payment-intents/{intent['id']}/checkout", json={})
        assert started.status_code == 200 and started.json()["provider"] == B, started.text
        return str(intent["id"]), str(started.json()["checkout"]["url"])


async def test_declined_at_b_then_paid_at_c(server: web.Server, database_url: str) -> None:
    url, env = server
    app = create_sandbox(env)
    rule = {"name": "b-first", "if": {"currency": ["CLP"]}, "then": {"priority": [B, C, A]}}
    routing = {"rules": [rule], "on_decline": {"retry": True, "max_attempts": 3}}
    headers = {"Authorization": f"Bearer {app['api_key']}"}
    saved = httpx.put(
        f"{url}/v1/admin/merchant-accounts/{app['merchant_account_id']}/routing",
        json=routing,
        headers=headers,
    )
    assert saved.status_code == 200, saved.text
    shots = web.shots_dir("second-chance-" + web.backend(database_url))
    async with web.chromium() as browser:
        for locale, size, heading, button in (
            ("es-CL", web.WIDTHS[1], "Tu pago fue rechazado", "Intentar de nuevo con Provider C"),
            ("en-US", web.WIDTHS[0], "Your payment was declined", "Try again with Provider C"),
        ):
            intent_id, at_b = await _declined_at_b(url, app, locale)
            buyer = await web.page_at(browser, size, locale=locale)
            refused: list[str] = []
            await web.keep_to_host(buyer, url, refused)
            violations = web.csp_violations(buyer)
            await buyer.goto(at_b)
            await buyer.click('button[name="outcome"][value="reject"]')
            await web.arrives(buyer, f"{url}/checkout-retry/{intent_id}")
            assert await buyer.locator("html").get_attribute("lang") == locale[:2]
            assert heading in await buyer.locator("h1").inner_text()
            assert "Provider B" in await buyer.locator(".message").inner_text()
            await web.screenshot(buyer, shots, f"retry-{locale}", check=web.fits_the_width)
            await buyer.set_viewport_size({"width": size[0], "height": size[1]})
            await web.submit(buyer, button)
            await buyer.click('button[name="outcome"][value="approve"]')
            await web.arrives(buyer, f"{url}/healthz*")
            assert refused == [] and violations == []
            async with httpx.AsyncClient(base_url=url, headers=headers) as api:
                paid = (await api.get(f"/v1/payment-intents/{intent_id}")).json()
            assert (paid["status"], paid["provider"]) == ("AUTHORIZED", C)
            first, second = (a["provider"] for a in paid["routing"]["attempts"])
            assert first == B and second == C, paid["routing"]["attempts"]  # declined, then paid

        # An offer the expiry job ended (checkouts/offer_expiry.py): the intent FAILED with the
        # offer still pending. The job's result is written directly: the live server's clock is real.
        intent_id, at_b = await _declined_at_b(url, app, "es-CL")
        buyer = await web.page_at(browser, web.WIDTHS[1], locale="es-CL")
        await buyer.goto(at_b)
        await buyer.click('button[name="outcome"][value="reject"]')
        await web.arrives(buyer, f"{url}/checkout-retry/{intent_id}")
        database = Database(database_url)
        try:
            async with database.transaction() as conn:
                ended = payment_intents.c.id == intent_id
                await conn.execute(update(payment_intents).where(ended).values(status="FAILED"))
        finally:
            await database.dispose()
        answer = await buyer.reload()
        assert answer is not None and answer.status == 410, answer
        assert "Volver a la tienda" in await buyer.locator("main").inner_text()
        await web.screenshot(buyer, shots, "retry-ended-es-CL", check=web.fits_the_width)
