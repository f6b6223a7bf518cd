"""Every dashboard page and form names the scope it needs in one table
(payorch.access.pages.PAGES), and a route the table does not list is refused to everyone."""

from __future__ import annotations

import httpx
from starlette.responses import PlainTextResponse

from payorch.access.pages import ACTIONS, PAGES, PUBLIC
from payorch.access.scopes import SCOPES
from payorch.app import create_app
from payorch.dashboard.web import DashboardRoute
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox


def _dashboard_routes(runtime: Runtime) -> set[tuple[str, str]]:
    app = create_app(runtime=runtime)
    return {
        (method, route.path_format.removeprefix("/dashboard"))
        for route in app.routes
        if isinstance(route, DashboardRoute)
        for method in route.methods
    }


async def test_every_dashboard_route_is_in_the_table_and_the_table_has_no_other(runtime: Runtime) -> None:
    routes = _dashboard_routes(runtime)
    missing = sorted(routes - PAGES.keys())
    assert not missing, f"routes that declare no scope in payorch.access.pages.PAGES: {missing}"
    stale = sorted(PAGES.keys() - routes)
    assert not stale, f"PAGES names routes the dashboard does not have: {stale}"


def test_the_table_names_only_known_scopes_and_each_has_words_for_its_refusal() -> None:
    unknown = {scope for scope in PAGES.values() if scope != PUBLIC and scope not in SCOPES}
    assert not unknown
    assert ACTIONS.keys() == SCOPES.keys()


async def test_a_route_missing_from_the_table_is_refused_and_does_not_run(
    runtime: Runtime, sandbox: Sandbox
) -> None:
    ran: list[str] = []

    async def undeclared() -> PlainTextResponse:
        ran.append("ran")
        return PlainTextResponse("ran")

    app = create_app(runtime=runtime)
    app.router.routes.insert(0, DashboardRoute("/dashboard/undeclared", undeclared, methods=["GET", "POST"]))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        await sign_in(client, sandbox)  # an unrestricted key's session: it may do everything listed
        for method in ("GET", "POST"):
            page = await client.request(method, "/dashboard/undeclared")
            assert page.status_code == 403, page.text
            assert "does not say which permission it needs" in page.text
        assert (await client.get("/dashboard/payments")).status_code == 200  # listed: allowed
    assert ran == []
