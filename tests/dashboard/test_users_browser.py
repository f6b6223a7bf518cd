"""The Users page in Debian's Chromium against a live `payorch serve`, on SQLite and PostgreSQL:
the empty state, invite from the form (the link shown once, copied by its button), a refused
invite's message on the page, a role change and a removal; labelled fields and a visible focus;
screenshots at 1280 and 390 px (build/screenshots/ or PAYORCH_E2E_SCREENSHOTS), no page wider
than the screen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import browser as web

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def test_the_users_page_in_a_browser(server: web.Server, database_url: str) -> None:
    async with web.signed_in(server, database_url) as (url, app, page, shots):
        await web.follow(page, page.get_by_role("link", name="Users"))
        assert await page.get_by_role("heading", name="Users", level=1).is_visible()
        # The admin signed in (web.sign_in invites one through the API) is the first row.
        assert "admin-" in await page.locator("table").inner_text()
        await web.screenshot(page, shots, "users-first", check=web.fits_the_width)

        # Invite: labelled fields, the link shown once with its copy button.
        await page.get_by_label("Email").fill("ana@example.com")
        await page.get_by_label("Role", exact=True).select_option("developer")
        await web.submit(page, "Invite")
        link = await page.locator("#secret").inner_text()
        assert "/dashboard/invite/" in link
        assert await page.get_by_role("button", name="Copy the link").is_visible()
        await web.screenshot(page, shots, "users-invited", check=web.fits_the_width)
        await web.follow(page, page.get_by_role("link", name="Back to the users"))
        assert link not in await page.content()

        # The same email again: the page says why, keeps what was typed, adds no one.
        await page.get_by_label("Email").fill("ana@example.com")
        await web.submit(page, "Invite")
        alert = page.get_by_role("alert")
        assert "already a user of this application" in await alert.inner_text()
        assert await page.get_by_label("Email").input_value() == "ana@example.com"
        await web.screenshot(page, shots, "users-refused", check=web.fits_the_width)

        await page.goto(f"{url}/dashboard/users")
        await page.get_by_label("Email").fill("bob@example.com")
        await web.submit(page, "Invite")
        await page.goto(f"{url}/dashboard/users")
        await page.get_by_label("Role of ana@example.com", exact=True).select_option("finance")
        await web.submit(page, "Change the role of ana@example.com")
        assert "Role changed" in await page.get_by_role("status").inner_text()
        row = page.locator("tr", has_text="ana@example.com")
        assert "finance" in await row.inner_text()
        await web.screenshot(page, shots, "users-list", check=web.fits_the_width)

        # Keyboard: the focus is visible on the buttons.
        button = page.get_by_role("button", name="Remove bob@example.com")
        await button.focus()
        await page.keyboard.press("Shift+Tab")
        await page.keyboard.press("Tab")
        outline = await button.evaluate(
            "b => getComputedStyle(b).outlineStyle + ' ' + getComputedStyle(b).outlineWidth"
        )
        assert outline.startswith("solid") and not outline.endswith(" 0px"), outline
        await web.submit(page, "Remove bob@example.com")
        assert "bob@example.com" not in await page.locator("table").inner_text()
