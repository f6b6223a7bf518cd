"""Both simulator pages in headless Chromium at a desktop (1280 px) and a phone (390 px) width:
what the buyer sees of the shop's order, and no horizontal scrolling. Screenshots are kept in
PAYORCH_E2E_SCREENSHOTS (or tmp) to look at."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from tests import browser as web
from tests.e2e.helpers import RETURN_URL, open_checkout
from tests.kit import create_intent
from tests.live import as_sandbox, create_sandbox

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

A, B = PROVIDER_A, PROVIDER_B


async def new_checkout(server: web.Server, provider: str, reference: str, description: str | None) -> dict:  # type: ignore[type-arg]
    sandbox = create_sandbox(server.env)
    headers = {"Authorization": f"Bearer {sandbox['api_key']}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as api:
        intent = await create_intent(
            api,
            as_sandbox(sandbox),
            external_reference=reference,
            amount=12990,
            description=description,
            return_url=RETURN_URL,
        )
        response = await api.post(f"/v1/payment-intents/{intent['id']}/checkout", json={"provider": provider})
        assert response.status_code == 200, response.text
        return dict(response.json()["checkout"])


async def look(checkout: dict, name: str, shots: Path) -> dict[int, str]:  # type: ignore[type-arg]
    """Open the page at each width: its visible text per width; fails on horizontal scroll."""
    texts: dict[int, str] = {}
    async with web.chromium() as browser:
        for width, _ in web.WIDTHS:
            page = await web.page_at(browser, (width, 900))  # the same height at both
            await open_checkout(page, checkout)
            await page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
            scroll = await page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, f"{name} at {width} px is {scroll} px wide"
            texts[width] = await page.inner_text("main")
            await page.close()
    return texts


@pytest.mark.parametrize("description", ["Two coffees and a croissant", None])
async def test_provider_b_page_shows_the_order_and_fits_a_phone(
    server: web.Server, shots: Path, description: str | None
) -> None:
    reference = "order-2026-11-23-long-reference-0042"  # one long word: it must wrap on a phone
    checkout = await new_checkout(server, B, reference, description)
    texts = await look(checkout, f"provider-b-{'described' if description else 'plain'}", shots)
    for text in texts.values():
        assert f"Order {reference}" in text
        assert description is None or description in text


async def test_provider_a_page_shows_what_its_protocol_carries(server: web.Server, shots: Path) -> None:
    checkout = await new_checkout(server, A, "order-a-0042", "Two coffees")
    texts = await look(checkout, "provider-a", shots)
    for text in texts.values():
        # Webpay's wire has no room for the shop's reference or description: the page says so.
        assert "Buy order" in text and "order reference and description are not sent" in text
        assert "order-a-0042" not in text
