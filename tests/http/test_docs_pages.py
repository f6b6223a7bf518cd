"""/docs and /redoc render with no network: headless Debian Chromium against a live server, every
request to another host refused (page.route), and the operations are listed on both pages.
Screenshots at 1280 and 390 px wide go to PAYORCH_E2E_SCREENSHOTS (or the test's tmp dir)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import browser as web

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OPERATION = "Create a payment intent"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("docs") / "payorch.db"
    with web.serve_payorch(f"sqlite:///{path}", "--no-worker") as found:
        yield found.url


@pytest.mark.parametrize("page_path", ["/docs", "/redoc"])
def test_the_page_names_no_other_host(server: str, page_path: str) -> None:
    page = httpx.get(server + page_path)
    assert re.findall(r"https?://", page.text) == [], page.text
    # The ReDoc bundle hard-codes a logo on cdn.redoc.ly: the policy keeps the browser here.
    assert page.headers["content-security-policy"].startswith("default-src 'self';")
    assert "http" not in page.headers["content-security-policy"]


@pytest.mark.parametrize("page_path", ["/docs", "/redoc"])
async def test_the_page_lists_the_operations_offline(server: str, page_path: str, tmp_path: Path) -> None:
    shots = web.shots_dir(default=tmp_path)
    refused: list[str] = []
    served: list[str] = []

    async with web.chromium() as browser:
        for width, height in web.WIDTHS:
            page = await web.page_at(browser, (width, height))
            await web.keep_to_host(page, server, refused, served)
            await page.goto(server + page_path)
            await (
                page.get_by_text(OPERATION)
                .filter(visible=True)
                .first.wait_for(state="visible", timeout=30_000)
            )
            await page.screenshot(path=str(shots / f"{page_path[1:]}-{width}.png"))
            await page.close()

    assert refused == []
    assert any(url.endswith("/openapi.json") for url in served), served
