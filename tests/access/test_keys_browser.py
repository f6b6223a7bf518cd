"""The dashboard's API keys page in Chromium against a live `payorch serve`, on SQLite and
PostgreSQL: a key made with ticked scopes (labelled, grouped by resource) and an expiry; the
list shows each key's scopes, expiry and last use; screenshots at 1280 and 390 px, nothing
wider than the screen."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests import browser as web

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def test_a_key_with_chosen_scopes_and_an_expiry(server: web.Server, database_url: str) -> None:
    async with web.signed_in(server, database_url) as (url, app, page, shots):
        await page.get_by_role("link", name="API keys").click()
        form = page.locator("form", has=page.get_by_role("heading", name="Create a key"))
        await form.get_by_label("Name").fill("reports")
        payments = form.locator("fieldset fieldset", has=page.locator("legend", has_text="Payments"))
        await payments.get_by_label("payments:read: Read and search payments.").check()
        await form.get_by_label("events:read", exact=False).check()
        await form.get_by_label("Expires (UTC; empty: never)").fill("2099-06-30T12:00")
        await web.screenshot(page, shots, "api-keys-create", focus=form, check=web.fits_the_width)
        await web.submit(page, "Create key")
        key = await page.locator("#secret").inner_text()
        content = await page.content()
        assert "Scopes: payments:read, events:read." in content  # in the table's order
        assert "Expires: 2099-06-30 12:00" in content

        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}) as api:
            assert (await api.get("/v1/payments")).status_code == 200
            refused = await api.get("/v1/admin/webhook-endpoints")
            assert refused.status_code == 403
            assert refused.json()["error"]["details"] == {"required_scope": "webhooks:read"}

        await page.get_by_role("link", name="Back to the API keys").click()
        row = page.locator("tr", has_text="reports")
        text = await row.inner_text()
        assert "events:read" in text and "payments:read" in text
        assert "2099-06-30 12:00" in text and "not yet" not in text  # used just now
        first = page.locator("tr", has_text="first key")
        assert "every scope" in await first.inner_text() and "never" in await first.inner_text()
        await web.screenshot(page, shots, "api-keys-scopes", check=web.fits_the_width)
