"""/docs and /redoc render with no network: headless Debian Chromium against a live server, every
request to another host refused (page.route), and the operations are listed on both pages.
Screenshots at 1280 and 390 px wide go to PAYORCH_E2E_SCREENSHOTS (or the test's tmp dir)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.live import live_server, payorch_env
from tests.needs import missing

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CHROMIUM = "/usr/bin/chromium"
OPERATION = "Create a payment intent"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not Path(CHROMIUM).exists():
        missing("Debian chromium is not installed (apt-get install chromium)")
    path = tmp_path_factory.mktemp("docs") / "payorch.db"
    with live_server(payorch_env(f"sqlite:///{path}"), "--no-worker") as url:
        yield url


@pytest.mark.parametrize("page_path", ["/docs", "/redoc"])
def test_the_page_names_no_other_host(server: str, page_path: str) -> None:
    page = httpx.get(server + page_path)
    assert re.findall(r"https?://", page.text) == [], page.text
    # The ReDoc bundle hard-codes a logo on cdn.redoc.ly: the policy keeps the browser here.
    assert page.headers["content-security-policy"].startswith("default-src 'self';")
    assert "http" not in page.headers["content-security-policy"]


@pytest.mark.parametrize("page_path", ["/docs", "/redoc"])
async def test_the_page_lists_the_operations_offline(server: str, page_path: str, tmp_path: Path) -> None:
    from playwright.async_api import Route, async_playwright

    shots = Path(os.environ.get("PAYORCH_E2E_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    own = urlsplit(server).netloc
    refused: list[str] = []
    served: list[str] = []

    async def only_our_host(route: Route) -> None:
        if urlsplit(route.request.url).netloc == own:
            served.append(route.request.url)
            await route.continue_()
        else:
            refused.append(route.request.url)
            await route.abort("internetdisconnected")

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            for width, height in ((1280, 900), (390, 844)):
                page = await browser.new_page(viewport={"width": width, "height": height})
                await page.route("**/*", only_our_host)
                await page.goto(server + page_path)
                await (
                    page.get_by_text(OPERATION)
                    .filter(visible=True)
                    .first.wait_for(state="visible", timeout=30_000)
                )
                await page.screenshot(path=str(shots / f"{page_path[1:]}-{width}.png"))
                await page.close()
        finally:
            await browser.close()

    assert refused == []
    assert any(url.endswith("/openapi.json") for url in served), served
