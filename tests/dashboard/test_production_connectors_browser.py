"""The providers page of a PRODUCTION application in Debian's Chromium against a live `payorch
serve` (SQLite, PostgreSQL): a connector added by the command line is shown and removed, one is
added through the form (a refused try first: the message beside the field, the secret not kept),
changed (mode, priority, enabled, credentials) and removed. Screenshots at 1280 and 390 px
(build/screenshots/ or PAYORCH_E2E_SCREENSHOTS); nothing wider than the page, no CSP violation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import CHROMIUM
from tests.dashboard.helpers import WIDTHS, shots_dir
from tests.live import live_server, payorch_env, run_cli
from tests.needs import missing

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

A, B = "provider_a_redirect_post", "provider_b_redirect_get"
TOKEN = "APP_USR-live-token-browser-01234"
HOOK = "live-webhook-secret-browser-987"


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[tuple[str, dict[str, str]]]:
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium)")
    env = payorch_env(database_url)
    with live_server(env, "--no-worker") as url:
        yield url, {**env, "PAYORCH_PUBLIC_URL": url}


def cli(env: dict[str, str], *args: str) -> Any:
    done = run_cli(list(args), env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in args else done.stdout


async def test_a_production_connector_in_a_browser(
    server: tuple[str, dict[str, str]], database_url: str
) -> None:
    from playwright.async_api import Page, async_playwright

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
    shots = shots_dir(database_url)

    def listed() -> dict[str, dict[str, Any]]:
        return {
            item["provider"]: item for item in cli(env, "connectors", "list", *merchant, "--json")["items"]
        }

    async def shoot(page: Page, name: str) -> None:
        for width, height in WIDTHS:
            await page.set_viewport_size({"width": width, "height": height})
            await page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
            overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} is {overflow} px wider than {width}"
        await page.set_viewport_size({"width": WIDTHS[0][0], "height": WIDTHS[0][1]})

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            violations: list[str] = []
            page.on(
                "console",
                lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
            )

            async def submit(name: str, within: Any = None) -> None:
                async with page.expect_navigation():
                    await (within or page).get_by_role("button", name=name).click()

            await page.goto(url + "/dashboard/sign-in")
            await page.get_by_label("API key").fill(app["api_key"])
            await submit("Sign in")
            await page.get_by_role("link", name="Providers").click()
            assert await page.get_by_role("heading", name=A).count() == 1  # the command line's
            assert "POST /v1/admin" not in await page.content()

            add_b = page.locator("details", has=page.get_by_text(f"Add {B}"))
            await add_b.locator("summary").click()
            assert await add_b.get_by_label("Mode").input_value() == "PRODUCTION"
            await add_b.get_by_label("Priority").fill("2")
            await add_b.get_by_label("access_token").fill(TOKEN)
            await submit(f"Add {B}", add_b)
            add_b = page.locator("details", has=page.get_by_text(f"Add {B}"))
            assert await add_b.get_attribute("open") is not None  # the refused form, open
            secret = add_b.get_by_label("webhook_secret")
            assert await secret.get_attribute("aria-invalid") == "true"
            assert "Field required." in await add_b.locator(".field-error").inner_text()
            assert await add_b.get_by_label("access_token").input_value() == ""  # never kept
            assert await add_b.get_by_label("Priority").input_value() == "2"
            await shoot(page, "production-providers-refused")

            await add_b.get_by_label("access_token").fill(TOKEN)
            await secret.fill(HOOK)
            await submit(f"Add {B}", add_b)
            assert "Provider added." in await page.content() and TOKEN not in await page.content()
            assert (listed()[B]["mode"], listed()[B]["priority"], listed()[B]["has_credentials"]) == (
                "PRODUCTION",
                2,
                True,
            )
            await shoot(page, "production-providers")

            card_b = page.locator(".card", has=page.get_by_role("heading", name=B, exact=True))
            await card_b.get_by_label(f"Mode of {B}").select_option("SANDBOX")
            await card_b.get_by_label(f"Priority of {B}").fill("5")
            await card_b.get_by_label("Enabled").uncheck()
            await submit(f"Save {B}", card_b)
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
            await submit(f"Save credentials for {B}", card_b)
            assert "Credentials saved" in await page.content() and "rotated-token" not in await page.content()

            await submit(f"Remove {A}")
            assert "Provider removed." in await page.content() and A not in listed()
            assert by_cli["id"] not in await page.content()
            await submit(f"Remove {B}")
            assert listed() == {} and "No provider configured" in await page.content()
            assert violations == []
        finally:
            await browser.close()
