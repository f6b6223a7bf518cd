"""The table of operations and scopes (payorch.access.operations) covers the whole app: every
route of the API is either scoped or listed as taking no key, each as its endpoint really is
(an endpoint that authenticates has a scope; one listed open does not authenticate), and an
operation the table lacks is refused to every caller. No database needed but the app's own."""

from __future__ import annotations

import httpx
from fastapi import APIRouter
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute, Mount

from payorch.access import operations
from payorch.access.scopes import SCOPES
from payorch.app import create_app
from payorch.http.deps import CurrentCaller
from payorch.http.openapi_terms import authenticates
from payorch.http.routing import mount
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error


def _each_operation(routes: list[BaseRoute]) -> list[tuple[str, str, APIRoute | None]]:
    found: list[tuple[str, str, APIRoute | None]] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found += [(method, route.path_format, route) for method in sorted(route.methods)]
        elif isinstance(route, Mount):
            found.append(("GET", route.path + "/", None))
        else:
            for method in sorted(getattr(route, "methods", None) or {"GET"}):
                if method != "HEAD":
                    found.append((method, getattr(route, "path", ""), None))
    return found


def _authenticates(route: APIRoute | None) -> bool:
    return route is not None and authenticates(route)


async def test_every_operation_of_the_app_has_an_entry(runtime: Runtime) -> None:
    app = create_app(runtime)
    assert runtime.settings.simulator_enabled  # its controls and providers are among the routes
    missing = [
        f"{method} {path}"
        for method, path, _route in _each_operation(app.routes)
        if operations.required_scope(method, path) is None and not operations.is_open(method, path)
    ]
    assert not missing, "operations without an entry in payorch.access.operations:\n" + "\n".join(missing)


async def test_each_entry_says_what_its_endpoint_does(runtime: Runtime) -> None:
    """Scoped exactly when the endpoint authenticates; no entry names a route that is gone."""
    app = create_app(runtime)
    wrong = []
    seen = set()
    for method, path, route in _each_operation(app.routes):
        scoped = operations.required_scope(method, path) is not None
        seen.add((method, path))
        if scoped != _authenticates(route):
            wrong.append(f"{method} {path}: {'scoped' if scoped else 'open'} in the table")
    assert not wrong, "\n".join(wrong)
    stale = [f"{m} {p}" for m, p in [*operations.SCOPED, *operations.OPEN] if (m, p) not in seen]
    assert not stale, "entries for no route of the app:\n" + "\n".join(stale)
    assert operations.unknown_scopes() == []
    assert all(scope in SCOPES for scope in operations.SCOPED_PREFIXES.values())


def test_the_open_prefixes_leave_the_controls_scoped() -> None:
    assert operations.required_scope("POST", "/simulator/controls/faults") == "simulator:write"
    assert not operations.is_open("POST", "/simulator/controls/faults")
    assert operations.is_open("GET", "/simulator/some_provider/page")
    assert operations.required_scope("GET", "/v1/not-in-the-table") is None
    assert not operations.is_open("GET", "/v1/not-in-the-table")


async def test_an_operation_missing_from_the_table_is_refused_to_every_key(
    runtime: Runtime, sandbox: Sandbox
) -> None:
    """Deny by default: a route that authenticates but has no entry answers 403, even to a key
    made with every scope, and its endpoint never runs."""
    ran: list[str] = []
    router = APIRouter()

    @router.post("/v1/not-in-the-table")
    async def unlisted(caller: CurrentCaller) -> dict[str, str]:
        ran.append(caller.credential_id)
        return {}

    app = create_app(runtime)
    mount(app, router)  # after the app's own routes
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        answer = await client.post("/v1/not-in-the-table", headers=sandbox.headers)
    error = assert_error(answer, 403, "FORBIDDEN")
    assert error["details"] == {"required_scope": None}
    assert "POST /v1/not-in-the-table is not in the table" in error["message"]
    assert ran == []
