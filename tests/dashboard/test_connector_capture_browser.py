"""The providers page offers provider A's `capture` setting as a select beside its write-only
credentials (docs/providers.md, "Holding and capturing"), in Chromium at 1280 and 390 px: saved
as `deferred`, the connector then holds (its capture methods read from the stored credentials)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from payorch.providers.provider_a import PROVIDER_A
from tests import browser as web
from tests.live import live_server, payorch_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]  # a live server and Chromium


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    web.need_chromium()
    env = payorch_env(database_url)
    # A loaded machine (load 17 on 2 cores seen) starts a server in more than the usual 60 s.
    with live_server(env, "--no-worker", start_seconds=240) as url:
        yield web.Server(url, {**env, "PAYORCH_PUBLIC_URL": url})


async def test_the_capture_setting_is_a_select_and_is_saved(server: web.Server, database_url: str) -> None:
    async with web.signed_in(server, database_url) as (url, _app, page, shots):
        await page.goto(url + "/dashboard/providers")
        card = page.locator(".card", has=page.get_by_role("heading", name=PROVIDER_A))
        setting = card.get_by_label("capture")
        assert await setting.evaluate("e => e.tagName") == "SELECT"
        options = await setting.locator("option").all_inner_texts()
        assert options == ["immediate", "deferred"]  # the default first
        assert await card.get_by_label("api_key").get_attribute("type") == "password"
        await card.get_by_label("commerce_code").fill("597055555540")
        await card.get_by_label("api_key").fill("a-key")
        await setting.select_option("deferred")
        await web.submit(page, f"Save credentials for {PROVIDER_A}")
        assert "Credentials saved" in await page.content() and "a-key" not in await page.content()
        await web.screenshot(page, shots, "providers-capture", check=web.fits_the_width)
