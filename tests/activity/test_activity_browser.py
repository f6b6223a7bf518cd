"""The Activity page in Debian's Chromium against a live `payorch serve`, on SQLite and
PostgreSQL: linked in the navigation, the empty state, entries newest first, the next page,
labelled filters, a bad filter's message; screenshots at 1280 and 390 px (build/screenshots/ or
PAYORCH_E2E_SCREENSHOTS), no page wider than the screen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from payorch.runtime import Runtime
from tests import browser as web
from tests.activity.helpers import write_entries

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def test_the_activity_page_in_a_browser(
    server: web.Server, database_url: str, runtime: Runtime
) -> None:
    async with web.signed_in(server, database_url) as (url, app, page, shots):
        await web.follow(page, page.get_by_role("link", name="Activity"))
        assert await page.get_by_role("heading", name="Activity", level=1).is_visible()
        # Signing in wrote the first entries (the invite, its acceptance, the TOTP, the sign-in).
        rows = page.locator("tbody tr")
        assert "user.signed_in" in await rows.first.inner_text()
        before = await rows.count()
        await web.screenshot(page, shots, "activity-sign-in", check=web.fits_the_width)

        await write_entries(runtime, app["application_id"], 23)  # written as the change sites do
        await page.goto(f"{url}/dashboard/activity")
        assert await rows.count() == 20
        assert f"#{23 + before}" in await rows.first.inner_text()
        await web.screenshot(page, shots, "activity-list", check=web.fits_the_width)
        await web.follow(page, page.get_by_role("link", name="Older entries"))
        assert await rows.count() == 3 + before and f"#{3 + before}" in await rows.first.inner_text()

        await page.get_by_label("Actor id").fill("reconciliation")
        await page.get_by_label("Action").fill("connector.updated")
        await web.submit(page, "Show activity")
        assert await rows.count() == 2  # the 18th and 6th written
        assert f"#{18 + before}" in await rows.first.inner_text()
        await web.screenshot(page, shots, "activity-filtered", check=web.fits_the_width)

        await page.get_by_label("From (UTC)").fill("yesterday")
        await web.submit(page, "Show activity")
        assert "Nothing listed" in await page.get_by_role("alert").inner_text()
        assert await page.get_by_label("From (UTC)").input_value() == "yesterday"
        await web.screenshot(page, shots, "activity-bad-filter", check=web.fits_the_width)
