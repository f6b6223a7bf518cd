"""Each role can do exactly what the role x scope table says in the dashboard, over HTTP, on
SQLite and PostgreSQL (the issue's first "Show" point; the Chromium half is
test_roles_browser.py).

Read from the code's tables, so a row added is a row tested: for each role of
payorch.access.roles.ROLES, a person of that role signs in through the public sign-in form, then
every page (GET) and form (POST) of payorch.access.pages.PAGES is sent, with what would really
change something (a refund of a paid intent, a fresh endpoint to delete, a fresh person to
disable...). Allowed when the role's scopes (scopes_of) hold the route's scope: answered below
400. Refused otherwise: a 403 page naming the role and what it cannot do, and the database
exactly as before (every table of the application; only the session's own row may move).
A route of PAGES without a case here fails the test, and so does a scope the dashboard has no
page for that is not listed in NO_DASHBOARD_PAGE (those are the API's: tests of the key scopes)."""

from __future__ import annotations

import httpx
import pytest
from markupsafe import escape

from payorch.access.pages import ACTIONS
from payorch.access.roles import ROLES, scopes_of
from payorch.access.scopes import ALL_SCOPES
from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from tests.dashboard.roles_world import (
    CASES,
    HOOK,
    NO_DASHBOARD_PAGE,
    ROUTES,
    World,
    said,
    sign_in_as_role,
    snapshot,
)
from tests.kit import create_endpoint, create_intent, mock_sandbox
from tests.payments.fakes import FakeGateway
from tests.webhooks.helpers import PRIVATE_ON

pytestmark = pytest.mark.settings(**PRIVATE_ON, max_users=200)  # endpoints at 127.0.0.1


def test_every_route_has_a_case_and_every_scope_a_page_or_a_reason() -> None:
    assert sorted(CASES) == sorted((method, path) for method, path, _ in ROUTES)
    with_pages = {scope for _, _, scope in ROUTES}
    assert ALL_SCOPES - with_pages == NO_DASHBOARD_PAGE, "a scope gained or lost its dashboard pages"


@pytest.mark.parametrize("role", ROLES)
async def test_each_role_may_do_what_the_table_says_and_nothing_else(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, gateway: FakeGateway, role: str
) -> None:
    app = await mock_sandbox(runtime)
    clock.advance(2 * 86400)  # the application's first day has ended: it can be reconciled
    intent_id = (await create_intent(client, app, external_reference="roles-1"))["id"]
    endpoint_id = (await create_endpoint(client, app, HOOK)).id
    await create_intent(client, app, external_reference="roles-2")  # a delivery to the endpoint
    listed = await client.get(f"/v1/admin/webhook-endpoints/{endpoint_id}/deliveries", headers=app.headers)
    delivery_id = listed.json()["items"][0]["id"]
    world = World(runtime, client, app, intent_id, endpoint_id, delivery_id)
    csrf = await sign_in_as_role(client, app, role)
    granted = scopes_of(role)
    wrong: list[str] = []
    for method, path, scope in ROUTES:
        url, data = await CASES[(method, path)](world)
        before = await snapshot(runtime, app.application_id) if scope not in granted else None
        if data is None:
            answer = await client.get("/dashboard" + url)
        else:
            answer = await client.post("/dashboard" + url, data={"csrf": csrf, **data})
        line = f"{method} {path} ({scope}): {answer.status_code}"
        if scope in granted:
            allowed = answer.status_code < 400 or (path.endswith("/resolve") and answer.status_code == 404)
            if not allowed:
                wrong.append(f"{line}, allowed by the table: {said(answer)}")
        else:
            if (
                answer.status_code != 403
                or escape(f"Your role ({role}) cannot {ACTIONS[scope]}.") not in answer.text
            ):
                wrong.append(f"{line}, refused by the table: {said(answer)}")
            elif (after := await snapshot(runtime, app.application_id)) != before:
                changed = sorted(t for t in after if before is None or after[t] != before.get(t))
                wrong.append(f"{line}: refused, but the database changed: {changed}")
    assert not wrong, f"{role}:\n" + "\n".join(wrong)
