"""Each role in Debian's Chromium against a live `payorch serve` (no worker), on SQLite and
PostgreSQL: the issue's first "Show" point through the dashboard, with test_roles.py doing the
same over HTTP for every route.

One browser, one person per role (invited, the invite accepted on its page, TOTP enrolled where
the role needs it, then signed in again through the public sign-in form). For each scope of
payorch.access.scopes that a dashboard page or form needs, one page is opened and one form is
sent from the browser (a form the page does not show is built and submitted in the page, with
the session's own CSRF token): allowed when the role's scopes hold it; refused otherwise with the
403 page saying what the role cannot do, and the database unchanged. The navigation links are
exactly the pages the role may open, and an authorized payment's Refund button shows only for
roles that may refund."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING

import httpx
import pytest

from payorch.access.pages import ACTIONS, PAGES
from payorch.access.roles import ROLES, scopes_of
from payorch.runtime import Runtime
from payorch.users import service as users
from tests import browser as web
from tests.dashboard.roles_world import CASES, HOOK, ROUTES, World, snapshot
from tests.dashboard.signing import PASSWORD
from tests.kit import authorized_payment, create_endpoint, create_intent, mock_sandbox
from tests.totp_codes import fresh_code
from tests.webhooks.helpers import PRIVATE_ON

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.settings(**PRIVATE_ON, max_users=200)]

# The navigation's pages (base.html), each shown only to a role that may open it.
NAVIGATION = ("/overview", "/payments", "/links", "/exports", "/reconciliation", "/webhooks", "/providers", "/routing")
NAVIGATION += ("/api-keys", "/users", "/activity", "/sandbox")


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[web.Server]:
    with web.serve_payorch(database_url, "--no-worker") as found:
        yield found


async def _person(page: Page, url: str, world: World, role: str) -> None:
    """A person of ``role`` signed in through the dashboard's own pages."""
    rt = world.runtime
    email = f"{role}-{secrets.token_hex(4)}@example.com"
    async with rt.database.transaction() as conn:
        _, token = await users.invite(conn, rt.clock, world.operator, email, role, limit=200)
    await web.accept_invite(page, f"{url}/dashboard/invite/{token}", PASSWORD)
    secret = ""
    if page.url.endswith("/sign-in/enroll"):
        secret = await web.enroll_totp(page)
    await page.goto(f"{url}/dashboard/overview")
    await web.submit(page, "Sign out")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await web.submit(page, "Sign in")
    if secret:
        await page.get_by_label(web.TOTP_CODE_LABEL).fill(await fresh_code(secret))
        await web.submit(page, "Confirm")
    assert page.url.endswith("/dashboard/overview"), page.url


def _one_per_scope(method: str) -> dict[str, tuple[str, str]]:
    """For each scope, the first route of ``method`` that needs it."""
    chosen: dict[str, tuple[str, str]] = {}
    for route_method, path, scope in ROUTES:
        if route_method == method:
            chosen.setdefault(scope, (route_method, path))
    return chosen


async def test_each_role_in_the_browser(
    server: web.Server, client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    url, _ = server
    app = await mock_sandbox(runtime)
    intent_id = (await create_intent(client, app, external_reference="roles-1"))["id"]
    endpoint_id = (await create_endpoint(client, app, HOOK)).id
    await create_intent(client, app, external_reference="roles-2")  # a delivery to the endpoint
    listed = await client.get(f"/v1/admin/webhook-endpoints/{endpoint_id}/deliveries", headers=app.headers)
    world = World(runtime, client, app, intent_id, endpoint_id, listed.json()["items"][0]["id"])
    paid = await authorized_payment(runtime, app, amount=1000)
    pages, forms = _one_per_scope("GET"), _one_per_scope("POST")
    shots = web.shots_dir(web.backend(database_url))
    wrong: list[str] = []
    async with web.chromium() as browser:
        for role in ROLES:
            granted = scopes_of(role)
            page = await web.page_at(browser)
            await _person(page, url, world, role)
            links = await page.locator("nav[aria-label=Dashboard] a").evaluate_all(
                "links => links.map(a => new URL(a.href).pathname)"
            )
            may_open = [f"/dashboard{p}" for p in NAVIGATION if PAGES[("GET", p)] in granted]
            if links != may_open:
                wrong.append(f"{role}: navigation {links}, the table allows {may_open}")
            await page.goto(f"{url}/dashboard/payments/{paid.intent_id}")
            shows_refund = await page.get_by_role("button", name="Refund").count() > 0
            if shows_refund != ("refunds:write" in granted):
                wrong.append(f"{role}: the Refund button shown: {shows_refund}")
            for scope, (method, path) in [*pages.items(), *forms.items()]:
                target, data = await CASES[(method, path)](world)
                before = await snapshot(runtime, app.application_id) if scope not in granted else None
                if data is None:
                    answer = await page.goto(f"{url}/dashboard{target}")
                else:
                    await page.goto(f"{url}/dashboard/overview")
                    async with page.expect_navigation() as sent:
                        await page.evaluate(web.SUBMIT_IN_PAGE, [f"{url}/dashboard{target}", data])
                    answer = await sent.value
                status = answer.status if answer is not None else 0
                said = f"{role}: {method} {path} ({scope}): {status}"
                if scope in granted:
                    if status == 403:
                        wrong.append(f"{said}, allowed by the table")
                    continue
                text = await page.locator("main").inner_text()
                if status != 403 or f"Your role ({role}) cannot {ACTIONS[scope]}." not in text:
                    wrong.append(f"{said}, refused by the table: {text[:200]}")
                elif await snapshot(runtime, app.application_id) != before:
                    wrong.append(f"{said}: refused, but the database changed")
                if role == "viewer" and scope == "refunds:write":
                    await web.screenshot(page, shots, "role-refused", check=web.fits_the_width)
            await page.context.close()
    assert not wrong, "\n".join(wrong)
