"""Routes are mounted flat (payorch.http.routing): both apps hold every route on their own router,
and a router that includes another is refused, never mounted half."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Mount, Route

from payorch.app import create_app, create_in_process_app
from payorch.http.routing import mount
from payorch.runtime import Runtime


async def test_both_apps_hold_their_routes_flat(runtime: Runtime) -> None:
    for app in (create_app(runtime), create_in_process_app(runtime)):
        nested = [route for route in app.routes if not isinstance(route, (APIRoute, Route, Mount))]
        assert nested == []


def test_a_router_that_includes_another_is_refused() -> None:
    inner = APIRouter()

    @inner.get("/inner")
    async def inner_route() -> dict[str, str]:
        return {}

    outer = APIRouter()
    outer.include_router(inner)
    app = FastAPI()
    before = list(app.routes)
    with pytest.raises(TypeError, match="mount its routers flat"):
        mount(app, outer)
    assert app.routes == before


async def test_flat_routes_keep_their_order_and_answers() -> None:
    first, second = APIRouter(prefix="/v1"), APIRouter()

    @first.get("/things/{thing_id}")
    async def thing(thing_id: str) -> dict[str, str]:
        return {"from": "first", "id": thing_id}

    @second.get("/v1/things/{thing_id}")
    async def shadowed(thing_id: str) -> dict[str, str]:
        return {"from": "second", "id": thing_id}

    @second.get("/other")
    async def other() -> dict[str, str]:
        return {"from": "second"}

    app = FastAPI()
    mount(app, first, second)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        assert (await client.get("/v1/things/x")).json() == {"from": "first", "id": "x"}
        assert (await client.get("/other")).json() == {"from": "second"}
        assert (await client.get("/nothing")).status_code == 404
