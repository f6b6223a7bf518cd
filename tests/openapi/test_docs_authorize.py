"""/docs and /redoc in headless Debian Chromium against a live `payorch serve`: Authorize with a
sandbox key, "Try it out" on creating a payment intent answers 201 with the key sent as a bearer
token; every request either page makes goes to the server's own host, also with the pages'
Content-Security-Policy bypassed (so the pages themselves ask for nothing elsewhere, not merely
the policy refusing it). Screenshots at 1280 and 390 px go to PAYORCH_E2E_SCREENSHOTS (or
build/screenshots/openapi)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
import pytest

from tests import browser as web
from tests.live import create_sandbox

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page, Request

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CREATE = "#operations-Payment_intents-create_payment_intent"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[web.Server]:
    path = tmp_path_factory.mktemp("docs-authorize") / "payorch.db"
    with web.serve_payorch(f"sqlite:///{path}", "--no-worker") as found:
        yield found


def test_the_redoc_bundle_served_names_no_image_elsewhere(server: web.Server) -> None:
    url, _ = server
    page = httpx.get(url + "/redoc").text
    bundle = httpx.get(url + "/docs-assets/redoc.standalone.js")
    assert bundle.status_code == 200 and "/docs-assets/redoc.standalone.js" in page
    assert bundle.headers["content-type"].startswith("text/javascript")
    assert "cdn.redoc.ly" not in bundle.text and len(bundle.text) > 500_000


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["policy", "policy-bypassed"])
async def test_authorize_and_try_it_out_in_docs(server: web.Server, bypass_csp: bool) -> None:
    url, env = server
    app = create_sandbox(env)
    own = urlsplit(url).netloc
    seen: list[Request] = []
    body = {
        "merchant_account_id": app["merchant_account_id"],
        "external_reference": f"docs-try-{bypass_csp}",
        "amount": 1500,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
    }
    async with web.chromium() as browser:
        page = await web.page_at(browser, bypass_csp=bypass_csp)
        page.on("request", lambda r: seen.append(r))
        violations = web.csp_violations(page)
        await page.goto(url + "/docs")

        await page.get_by_role("button", name="Authorize").first.click()
        modal = page.locator(".modal-ux")
        assert "ApiKey" in await modal.inner_text() and "bearer" in (await modal.inner_text()).lower()
        await modal.locator("#auth-bearer-value").fill(app["api_key"])
        await modal.get_by_role("button", name="Apply credentials").click()
        await modal.get_by_text("Logout").wait_for()  # authorized
        await shoot(page, "docs-authorized", bypass_csp)
        await modal.locator("button.btn-done").click()

        operation = page.locator(CREATE)
        await operation.locator(".opblock-summary").first.click()
        await operation.get_by_role("button", name="Try it out").click()
        await operation.locator("textarea.body-param__text").fill(json.dumps(body))
        async with page.expect_response(lambda r: r.url == url + "/v1/payment-intents") as answered:
            await operation.get_by_role("button", name="Execute").click()
        response = await answered.value
        assert response.status == 201, await response.text()
        status = operation.locator(".live-responses-table tbody .response-col_status").first
        await status.wait_for()
        assert (await status.inner_text()).strip().startswith("201")
        await shoot(page, "docs-try-it-out-201", bypass_csp, focus=status)
        sent = response.request
        assert (
            sent.method == "POST" and await sent.header_value("authorization") == f"Bearer {app['api_key']}"
        )
        created = (await response.json())["id"]

        page = await page.context.new_page()
        page.on("request", lambda r: seen.append(r))
        web.csp_violations(page, violations)
        await page.goto(url + "/redoc")
        await page.get_by_text("Create a payment intent").filter(visible=True).first.wait_for(timeout=30_000)
        await page.wait_for_load_state("networkidle")
        await shoot(page, "redoc", bypass_csp)

    # data: is inline; blob:<origin>/<id> (ReDoc's worker) is made by the page at its origin.
    off_host = [
        r.url
        for r in seen
        if not r.url.startswith("data:") and urlsplit(r.url.removeprefix("blob:")).netloc != own
    ]
    assert off_host == [], off_host
    assert violations == [], violations  # nothing was even tried against the policy
    assert any(r.url.endswith("/docs-assets/redoc.standalone.js") for r in seen)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {app['api_key']}"}) as api:
        assert api.get(f"/v1/payment-intents/{created}").json()["status"] == "CREATED"


async def shoot(page: Page, name: str, bypass_csp: bool, focus: Locator | None = None) -> None:
    """The viewport at each width (the whole page is the full document, ten screens long),
    with ``focus`` scrolled into view."""
    if bypass_csp:  # one set of pictures is enough
        return
    await web.screenshot(page, web.shots_dir("openapi"), name, full_page=False, focus=focus)
