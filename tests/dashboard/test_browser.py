"""The dashboard in Debian's Chromium against a live `payorch serve` (API, simulator and worker)
on SQLite and PostgreSQL: one walk through every page and action, every request to another host
refused. Screenshots at 1280 and 390 px go to PAYORCH_E2E_SCREENSHOTS, or build/screenshots/
(git-ignored)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests import browser as web
from tests.live import create_sandbox
from tests.webhooks.receiver import Receiver, serve_receiver

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url) as found:  # with its worker: webhooks are delivered
        yield found


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as found:
        yield found


async def wait_for_delivery(api: httpx.AsyncClient, status: str, attempts: int) -> None:
    """Until the application's one delivery has ``status`` and ``attempts`` (the worker's job)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        items = (await api.get("/v1/admin/webhook-deliveries")).json()["items"]
        if items and items[0]["status"] == status and items[0]["attempts"] >= attempts:
            return
        await asyncio.sleep(0.3)
    raise AssertionError(f"no {status} delivery after {attempts} attempts: {items}")


async def test_every_page_and_action_in_a_browser(
    server: web.Server, database_url: str, receiver: Receiver
) -> None:
    url, env = server
    app = create_sandbox(env)
    shots = web.shots_dir(web.backend(database_url))
    refused: list[str] = []

    headers = {"Authorization": f"Bearer {app['api_key']}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as api, web.chromium() as browser:
        page = await web.page_at(browser)
        await page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
        await web.keep_to_host(page, url, refused)
        violations = web.csp_violations(page)  # the pages keep to their own Content-Security-Policy

        # Sign in (an unknown email first); keyboard focus is visible.
        await page.goto(url + "/dashboard")
        assert page.url.endswith("/dashboard/sign-in")
        await page.get_by_label("Email").fill("nobody@example.com")
        await page.get_by_label("Password").fill("not anyone's password")
        await web.submit(page, "Sign in")
        assert "do not match" in await page.content()
        await page.get_by_label("Email").fill("nobody@example.com")
        await page.keyboard.press("Tab")
        outline = await page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline != "none"
        await web.screenshot(page, shots, "sign-in")
        await web.sign_in(page, url, app["api_key"])  # an admin: invited, TOTP enrolled
        assert page.url.endswith("/dashboard/overview")
        assert "No payment intents in this period" in await page.content()

        # A webhook endpoint that fails (HTTP 500), created with its secret shown once.
        await page.get_by_role("link", name="Webhooks", exact=True).click()
        await page.get_by_label("URL").fill(receiver.url("/status/500"))
        await web.submit(page, "Add endpoint")
        secret = await page.locator("#secret").inner_text()
        assert re.fullmatch(r"[0-9a-f]{64}", secret)
        await page.get_by_role("button", name="Copy the secret").click()
        await page.get_by_role("button", name="Copied").wait_for()
        assert await page.evaluate("navigator.clipboard.readText()") == secret
        await web.screenshot(page, shots, "webhook-created")

        # Sandbox: a test payment through the simulator, back to the intent's page.
        await page.get_by_role("link", name="Sandbox").click()
        await page.get_by_label("Provider").select_option("provider_b_redirect_get")
        await web.submit(page, "Make a test payment")
        await page.wait_for_selector('button[name="outcome"][value="approve"]')
        await page.click('button[name="outcome"][value="approve"]')
        await page.wait_for_url(re.compile(r".*/dashboard/payments/payi_[0-9a-z]+$"), timeout=30_000)
        intent_url = page.url
        assert "AUTHORIZED" in await page.content()

        # Refund part of it; the provider's answer is shown.
        await page.get_by_label(re.compile("^Amount in CLP")).fill("500")
        await page.get_by_label("Reason").fill("customer request")
        await web.submit(page, "Refund")
        content = await page.content()
        assert "The provider accepted the refund" in content and "PARTIALLY_REFUNDED" in content
        await wait_for_delivery(api, "PENDING", 1)  # the first notice failed with 500
        await page.reload()
        await web.screenshot(page, shots, "intent")

        # The failed delivery: its attempts; fix the URL, retry, delivered.
        await page.goto(url + "/dashboard/webhooks/deliveries?status=PENDING")
        await web.screenshot(page, shots, "deliveries")
        await page.locator("a.mono[href*='/whd_']").first.click()
        await page.wait_for_url(re.compile(r".*/whd_[0-9a-z]+$"))  # not mid-load
        assert "unexpected_status" in await page.content()
        delivery_url = page.url
        await web.screenshot(page, shots, "delivery")
        await page.get_by_role("link", name=re.compile("^whe_")).click()
        await page.get_by_label(re.compile("^Since")).fill("2000-01-01")
        await page.get_by_label("Also deliveries still retrying after a failure").check()
        await web.submit(page, "Recover")
        recovered = re.search(r"(\d+) failed deliveries recovered", await page.content())
        assert recovered and int(recovered.group(1)) >= 1  # the intent's notices, all failing
        await page.get_by_label("URL").fill(receiver.url("/hook"))
        await web.submit(page, "Save")
        assert "Saved." in await page.content()
        await page.goto(delivery_url)
        await web.submit(page, "Retry now")
        await wait_for_delivery(api, "SUCCEEDED", 2)
        assert receiver.at("/hook")
        await page.goto(intent_url)
        assert "status-SUCCEEDED" in await page.content()

        # Endpoint: disable, enable, delete.
        await page.goto(url + "/dashboard/webhooks")
        await page.locator("a.mono[href*='/whe_']").first.click()
        await web.submit(page, "Disable")
        assert "<dd>disabled</dd>" in await page.content()
        await web.submit(page, "Enable")
        await web.screenshot(page, shots, "webhook-endpoint")
        await web.submit(page, "Delete this endpoint")
        assert "No endpoint yet" in await page.content()

        # Providers: priority and credentials.
        await page.get_by_role("link", name="Providers").click()
        await page.get_by_label("Priority of provider_b_redirect_get").fill("5")
        await web.submit(page, "Save provider_b_redirect_get")
        assert await page.get_by_label("Priority of provider_b_redirect_get").input_value() == "5"
        # Credential fields are named as the provider names them (several may have a
        # webhook_secret): filled within provider B's card.
        card_b = page.locator(".card", has=page.get_by_role("heading", name="provider_b_redirect_get"))
        await card_b.get_by_label("access_token").fill("test-token")
        await card_b.get_by_label("webhook_secret").fill("test-webhook-secret")
        await web.submit(page, "Save credentials for provider_b_redirect_get")
        assert "Credentials saved" in await page.content() and "test-token" not in await page.content()
        await web.screenshot(page, shots, "providers")

        # API keys: create (shown once), revoke it.
        await page.get_by_role("link", name="API keys").click()
        await page.get_by_label("Name").fill("second key")
        await web.submit(page, "Create key")
        assert (await page.locator("#secret").inner_text()).startswith("pay_sb_")
        await page.get_by_role("link", name="Back to the API keys").click()
        await web.submit(page, "Revoke second key")
        assert "Revoked" in await page.content()
        await web.screenshot(page, shots, "api-keys")

        # The lists and the overview, with data.
        await page.goto(url + "/dashboard/payments")
        await page.get_by_label("Status").select_option("PARTIALLY_REFUNDED")
        await web.submit(page, "Show payments")
        assert await page.locator("a.mono[href*='/payi_']").count() == 1
        await web.screenshot(page, shots, "payments")
        await page.get_by_role("link", name="Overview").click()
        await page.wait_for_url(re.compile(r".*/dashboard/overview$"))  # content() mid-load is ''
        content = await page.content()
        assert "PARTIALLY_REFUNDED" in content and "CLP 1,500" in content
        await web.screenshot(page, shots, "overview")

        # Sign out: the pages send the browser to sign-in.
        await web.submit(page, "Sign out")
        await page.goto(url + "/dashboard/payments")
        assert page.url.endswith("/dashboard/sign-in")
        assert violations == []
    assert refused == []
