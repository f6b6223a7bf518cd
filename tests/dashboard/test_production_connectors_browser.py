"""The providers page of a PRODUCTION application in Debian's Chromium against a live `payorch
serve` (SQLite, PostgreSQL): a connector added by the command line is shown and removed, one is
added through the form (a refused try first: the message beside the field, the secret not kept),
shows where the provider notifies (its notification URL), changed (mode, priority, enabled, credentials) and removed. Screenshots at 1280 and 390 px
(build/screenshots/ or PAYORCH_E2E_SCREENSHOTS); nothing wider than the page, no CSP violation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from tests import browser as web
from tests.live import run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

A, B = PROVIDER_A, PROVIDER_B
TOKEN = "APP_USR-live-token-browser-01234"
HOOK = "live-webhook-secret-browser-987"


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


def cli(env: dict[str, str], *args: str) -> Any:
    done = run_cli(list(args), env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


async def test_a_production_connector_in_a_browser(server: web.Server, database_url: str) -> None:
    url, env = server
    app = cli(env, "applications", "create", "--name", "Live shop", "--environment", "PRODUCTION", "--json")
    merchant = ["--merchant", app["merchant_account_id"]]
    by_cli = cli(
        env,
        "connectors",
        "add",
        *merchant,
        "--provider",
        A,
        "--mode",
        "PRODUCTION",
        "--credential",
        "commerce_code=597012345678",
        "--credential",
        "api_key=live-api-key-secret",
        "--json",
    )
    shots = web.shots_dir(web.backend(database_url))

    def listed() -> dict[str, dict[str, Any]]:
        return {
            item["provider"]: item for item in cli(env, "connectors", "list", *merchant, "--json")["items"]
        }

    async with web.chromium() as browser:
        page = await web.page_at(browser)
        violations = web.csp_violations(page)
        await web.sign_in(page, url, app["api_key"])
        await page.get_by_role("link", name="Providers").click()
        assert await page.get_by_role("heading", name=A).count() == 1  # the command line's
        assert "POST /v1/admin" not in await page.content()

        add_b = page.locator("details", has=page.get_by_text(f"Add {B}"))
        await add_b.locator("summary").click()
        assert await add_b.get_by_label("Mode").input_value() == "PRODUCTION"
        await add_b.get_by_label("Priority").fill("2")
        await add_b.get_by_label("access_token").fill(TOKEN)
        await web.submit(page, f"Add {B}", add_b)
        add_b = page.locator("details", has=page.get_by_text(f"Add {B}"))
        assert await add_b.get_attribute("open") is not None  # the refused form, open
        secret = add_b.get_by_label("webhook_secret")
        assert await secret.get_attribute("aria-invalid") == "true"
        assert "Field required." in await add_b.locator(".field-error").inner_text()
        assert await add_b.get_by_label("access_token").input_value() == ""  # never kept
        assert await add_b.get_by_label("Priority").input_value() == "2"
        await web.screenshot(page, shots, "production-providers-refused", check=web.fits_the_width)

        await add_b.get_by_label("access_token").fill(TOKEN)
        await secret.fill(HOOK)
        await web.submit(page, f"Add {B}", add_b)
        assert "Provider added." in await page.content() and TOKEN not in await page.content()
        assert (listed()[B]["mode"], listed()[B]["priority"], listed()[B]["has_credentials"]) == (
            "PRODUCTION",
            2,
            True,
        )
        # Where provider B notifies: this connector's own URL, sent with each checkout.
        b_id = listed()[B]["id"]
        told = await page.locator(f"#notifications-{b_id}").inner_text()
        assert told.startswith(f"{url}/v1/provider-notifications/{B}/{b_id}"), told
        assert "nothing to register" in told, told
        a_told = await page.locator(f"#notifications-{by_cli['id']}").inner_text()
        assert a_told.startswith("none: this provider sends none"), a_told
        await web.screenshot(page, shots, "production-providers", check=web.fits_the_width)

        card_b = page.locator(".card", has=page.get_by_role("heading", name=B, exact=True))
        await card_b.get_by_label(f"Mode of {B}").select_option("SANDBOX")
        await card_b.get_by_label(f"Priority of {B}").fill("5")
        await card_b.get_by_label("Enabled").uncheck()
        await web.submit(page, f"Save {B}", card_b)
        assert "Saved." in await page.content()
        item = listed()[B]
        assert (item["mode"], item["priority"], item["enabled"], item["has_credentials"]) == (
            "SANDBOX",
            5,
            False,
            True,
        )
        card_b = page.locator(".card", has=page.get_by_role("heading", name=B, exact=True))
        await card_b.get_by_label("access_token").fill("rotated-token")
        await card_b.get_by_label("webhook_secret").fill("rotated-hook")
        await web.submit(page, f"Save credentials for {B}", card_b)
        assert "Credentials saved" in await page.content() and "rotated-token" not in await page.content()

        await web.submit(page, f"Remove {A}")
        assert "Provider removed." in await page.content() and A not in listed()
        assert by_cli["id"] not in await page.content()
        await web.submit(page, f"Remove {B}")
        assert listed() == {} and "No provider configured" in await page.content()
        assert violations == []
