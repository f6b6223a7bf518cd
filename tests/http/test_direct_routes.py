"""The in-process app's plain routes are called directly (payorch.http.direct_routes): the caller
gets the answer FastAPI gives, for a plain route, one with an error a handler takes, one that
crashes, and any other request (not plain, no route, another method), which FastAPI answers
itself (a path parameter with a validator is FastAPI's to check). A route's connection ends
before its answer is sent, and sees the endpoint's failure."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import httpx
import pytest
from fastapi import Depends, FastAPI, Request
from fastapi.routing import APIRoute
from pydantic import AfterValidator
from starlette.responses import JSONResponse, Response

from payorch.app import create_in_process_app
from payorch.errors import AuthenticationFailed, ResourceNotFound
from payorch.http.direct_routes import DirectRoutes, plain
from payorch.http.errors import install_error_handlers
from payorch.runtime import Runtime

EVENTS: list[str] = []


async def connection(request: Request) -> AsyncIterator[str]:
    EVENTS.append("begin")
    try:
        yield f"conn for {request.url.path}"
        EVENTS.append("commit")
    except Exception as exc:
        EVENTS.append(f"rollback {type(exc).__name__}")
        raise


Connection = Annotated[str, Depends(connection, scope="function")]


async def caller(request: Request) -> str:
    EVENTS.append("caller")
    if request.headers.get("authorization") != "Bearer right":
        raise AuthenticationFailed()
    return "right"


Caller = Annotated[str, Depends(caller)]


def _known(name: str) -> str:
    if name not in ("a", "b"):
        raise ValueError(f"unknown name {name!r}")
    return name


Known = Annotated[str, AfterValidator(_known)]


class _Sent(JSONResponse):
    async def __call__(self, scope: object, receive: object, send: object) -> None:
        EVENTS.append("answer")
        await super().__call__(scope, receive, send)  # type: ignore[arg-type]


def example_app(*, direct: bool = False) -> FastAPI:
    app = FastAPI(openapi_url=None)
    install_error_handlers(app)

    @app.put("/items/{item}/parts/{part}")
    async def put_part(item: str, part: str, request: Request, conn: Connection) -> Response:
        body = (await request.body()).decode()
        answer = _Sent({"item": item, "part": part, "conn": conn, "body": body}, status_code=201)
        # FastAPI's request handling keeps its stacks in the scope; a direct call has none.
        answer.headers["x-by"] = "fastapi" if "fastapi_inner_astack" in request.scope else "direct"
        return answer

    @app.get("/missing/{item}")
    async def missing(item: str, request: Request, conn: Connection) -> Response:
        raise ResourceNotFound(f"no item {item}")

    @app.get("/crash")
    async def crash(request: Request, conn: Connection) -> Response:
        raise RuntimeError("a bug")

    @app.get("/owned/{item}")
    async def owned(item: str, caller: Caller, conn: Connection) -> Response:
        return JSONResponse({"item": item, "caller": caller, "conn": conn})

    @app.post("/bare")
    async def bare(request: Request) -> Response:
        return JSONResponse({"seen": request.headers.get("x-seen")})

    @app.delete("/known/{name}")
    async def known(name: Known, conn: Connection) -> Response:
        return JSONResponse({"name": name, "conn": conn})

    @app.get("/query")
    async def query(request: Request, n: int) -> Response:
        return JSONResponse({"n": n})

    if direct:
        app.add_middleware(DirectRoutes, routes=app)
    return app


def client(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://payorch.test")


CALLS: list[tuple[str, str, dict[str, object]]] = [
    ("PUT", "/items/i1/parts/p%202", {"content": b"hello"}),
    ("GET", "/missing/i9", {}),
    ("GET", "/crash", {}),
    ("POST", "/bare", {"headers": {"X-Seen": "yes"}}),
    ("GET", "/owned/o1", {"headers": {"Authorization": "Bearer right"}}),
    ("GET", "/owned/o1", {"headers": {"Authorization": "Bearer wrong"}}),
    ("DELETE", "/known/a", {}),
    ("DELETE", "/known/zzz", {}),  # refused by its validator: 422, the endpoint never runs
    ("GET", "/query?n=3", {}),
    ("GET", "/query?n=x", {}),
    ("GET", "/items/i1/parts/p1", {}),  # another method: 405
    ("GET", "/nowhere", {}),
]


@pytest.mark.parametrize(("method", "url", "options"), CALLS)
async def test_the_direct_answer_is_fastapis(method: str, url: str, options: dict[str, object]) -> None:
    answers, events = [], []
    for served in (example_app(), example_app(direct=True)):
        EVENTS.clear()
        async with client(served) as http:
            answer = await http.request(method, url, **options)  # type: ignore[arg-type]
        answers.append((answer.status_code, answer.headers.get("content-type"), answer.content))
        events.append(list(EVENTS))
    assert answers[0] == answers[1]
    assert events[0] == events[1]


async def test_the_connection_ends_before_the_answer_and_sees_a_failure() -> None:
    async with client(example_app(direct=True)) as http:
        EVENTS.clear()
        answer = await http.put("/items/a/parts/b")
        assert (answer.status_code, answer.headers["x-by"]) == (201, "direct")
        assert EVENTS == ["begin", "commit", "answer"]
        EVENTS.clear()
        assert (await http.get("/missing/a")).status_code == 404
        assert EVENTS == ["begin", "rollback ResourceNotFound"]
        EVENTS.clear()
        crashed = await http.get("/crash")
        assert crashed.status_code == 500
        assert crashed.json()["error"]["code"] == "INTERNAL_ERROR"
        assert EVENTS == ["begin", "rollback RuntimeError"]


def test_only_plain_routes_are_called_directly() -> None:
    routes = {route.path: plain(route) for route in example_app().routes if isinstance(route, APIRoute)}
    assert {path for path, found in routes.items() if found is None} == {"/query", "/known/{name}"}


async def test_the_simulated_providers_routes_are_plain(runtime: Runtime) -> None:
    """Every provider API route and buyer's page of the in-process app is called directly; the
    controls that take a body or a checked path parameter (a provider's name) go FastAPI's way."""
    app = create_in_process_app(runtime)
    for route in app.routes:
        assert isinstance(route, APIRoute)
        if route.path.startswith("/simulator/controls/"):
            checked = any(field.field_info.metadata for field in route.dependant.path_params)
            assert (plain(route) is None) == bool(route.dependant.body_params or checked), route.path
        else:
            assert plain(route) is not None, route.path
