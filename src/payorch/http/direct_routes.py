"""Plain routes called straight, without FastAPI's request handling (both apps, payorch.app).

A route is plain when its endpoint takes only the request, its path's text parameters and
dependencies of the request alone (the caller's key check; ``Conn``, ``ReadConn``: run as
FastAPI runs a dependency with yield) and returns a Response: every simulated provider's API and
page, the buyer's return, an intent's read. ``DirectRoutes``, innermost middleware, calls such an
endpoint itself: the route the router would choose, the same endpoint (a simulated provider's
runs its wrapper, simulator/api.py: credentials, the public write limit, faults, replays), its
dependencies in FastAPI's order with a connection ended before the answer is sent, its errors
answered by the app's own exception handlers. What it leaves out is FastAPI's generic work around
each request (its exception and exit-stack middleware, dependency solving, parameter checks),
which a plain route does not need (docs/performance.md, "Instructions per payment"). Any other
request (a body, a query, a header parameter, another kind of dependency; no route; a method the
path does not take) goes on to the app's router.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from anyio import CancelScope
from fastapi import FastAPI
from fastapi.concurrency import _asynccontextmanager_with_shielded_exit
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic.fields import FieldInfo
from starlette._exception_handler import wrap_app_handling_exceptions
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

# A dependency of the request alone: (its parameter, the call, whether FastAPI would run it as
# an async context manager, exited before the answer is sent, rather than await its value).
Dependency = tuple[str, Callable[[Request], Any], bool]


@dataclass(frozen=True, slots=True)
class _Plain:
    """How to call a plain route's endpoint: its request's name, its dependencies in FastAPI's
    order, its path's parameters."""

    endpoint: Callable[..., Any]
    request_name: str | None
    dependencies: tuple[Dependency, ...]
    path_names: tuple[tuple[str, str], ...]  # (parameter, path key)
    contexts: bool  # some dependency is a context


def _dependency(dependency: Dependant) -> Dependency | None:
    """A dependency of the request alone, awaited (a coroutine function) or run as an async
    context manager of scope "function" (an async generator: ``Conn``); None for any other."""
    call, own_name, request_name = dependency.call, dependency.name, dependency.request_param_name
    context = inspect.isasyncgenfunction(call)
    plain = ((context and dependency.scope == "function") or inspect.iscoroutinefunction(call)) and not (
        dependency.concurrency is not None
        or dependency.dependencies
        or _has_parameters(dependency)
        or _takes_more(dependency)
    )
    if not plain or call is None or own_name is None or request_name is None:
        return None
    if context:
        manager = asynccontextmanager(call)
        return own_name, lambda request: manager(**{request_name: request}), True
    return own_name, lambda request: call(**{request_name: request}), False


def _takes_more(dependant: Dependant) -> bool:
    """It takes something FastAPI makes for it besides the request."""
    return (
        dependant.background_tasks_param_name is not None
        or dependant.response_param_name is not None
        or dependant.security_scopes_param_name is not None
        or dependant.websocket_param_name is not None
        or dependant.http_connection_param_name is not None
    )


def _has_parameters(dependant: Dependant) -> bool:
    return bool(
        dependant.query_params or dependant.header_params or dependant.cookie_params or dependant.body_params
    )


def plain(route: BaseRoute) -> _Plain | None:
    """How to call ``route`` directly, or None when it is not plain (module docstring)."""
    if type(route) is not APIRoute:  # a route class of its own may handle requests its own way
        return None
    dependant = route.dependant
    endpoint = dependant.call
    if (
        endpoint is None
        or not inspect.iscoroutinefunction(endpoint)
        or _has_parameters(dependant)
        or _takes_more(dependant)
        or not _answers_itself(endpoint)
        or not all(_plain_text(field.field_info) for field in dependant.path_params)
    ):
        return None
    dependencies = [_dependency(dependency) for dependency in dependant.dependencies]
    found = tuple(dependency for dependency in dependencies if dependency is not None)
    if len(found) < len(dependencies):
        return None
    paths = tuple((field.name, field.alias) for field in dependant.path_params)
    contexts = any(context for _, _, context in found)
    return _Plain(endpoint, dependant.request_param_name, found, paths, contexts)


def _plain_text(info: FieldInfo) -> bool:
    """A path parameter taken as it comes: text with no validator or constraint (``Annotated``
    metadata such as a known-name check is FastAPI's to run: such a route is not plain)."""
    return info.annotation is str and not info.metadata


def _answers_itself(endpoint: Callable[..., Any]) -> bool:
    """The endpoint says it returns a Response (FastAPI then sends it as it is)."""
    returns = inspect.signature(endpoint, eval_str=True).return_annotation
    return isinstance(returns, type) and issubclass(returns, Response)


def _unnamed(route: APIRoute) -> str:
    """The route's path pattern without its group names (so that patterns join into one)."""
    return re.sub(r"\(\?P<[^>]+>", "(?:", route.path_regex.pattern)


class DirectRoutes:
    """Innermost middleware of an app: calls its plain routes directly (module docstring).

    A request that some plain route's path takes is matched against the app's routes in their
    order, as its router does; if the first route that takes it is plain and takes its method,
    that route's endpoint is called here, an error one of the app's handlers takes is answered
    by it, and any other error goes on out, as from the app's own exception middleware. Every
    other request goes on to the app's exception middleware and router unchanged."""

    def __init__(self, app: ASGIApp, routes: FastAPI) -> None:
        self.app = app
        self.router = routes.router
        self._routes = [(route, plain(route)) for route in routes.router.routes]
        direct = [route for route, found in self._routes if found is not None and isinstance(route, APIRoute)]
        # One match against every plain route's path: a request none takes goes on at once.
        self._taken = re.compile("|".join(_unnamed(route) for route in direct)) if direct else None
        # What Starlette's exception middleware holds: every handler but the last resort's.
        handlers = {
            key: value for key, value in routes.exception_handlers.items() if key not in (500, Exception)
        }
        handled = ExceptionMiddleware(app, handlers=handlers)
        self._handlers = (handled._exception_handlers, handled._status_handlers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._taken is not None and self._taken.match(scope["path"]):
            for route, direct in self._routes:
                match, child = route.matches(scope)
                if match is Match.FULL and direct is not None:
                    scope["router"] = self.router
                    scope.update(child)
                    scope["starlette.exception_handlers"] = self._handlers
                    request = Request(scope, receive, send)
                    await wrap_app_handling_exceptions(_Call(direct, request), request)(scope, receive, send)
                    return
                if match is not Match.NONE:
                    break  # the app's way: a route that is not plain, or another method
        await self.app(scope, receive, send)


@dataclass(frozen=True, slots=True)
class _Call:
    direct: _Plain
    request: Request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _answer(self.direct, self.request, scope, receive, send)


async def _answer(direct: _Plain, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
    """The endpoint's answer, its dependencies solved in order and their contexts ended before
    the answer is sent, each end shielded from cancellation (as FastAPI runs a dependency with
    yield of scope "function": with its own helper)."""
    values: dict[str, Any] = {} if direct.request_name is None else {direct.request_name: request}
    params = request.path_params
    for name, key in direct.path_names:
        values[name] = params[key]
    if not direct.contexts:
        for name, call, _ in direct.dependencies:
            values[name] = await call(request)
        response = await direct.endpoint(**values)
        await response(scope, receive, send)
        return
    with CancelScope() as cleanup:
        async with AsyncExitStack() as stack:
            for name, call, context in direct.dependencies:
                if context:
                    manager = _asynccontextmanager_with_shielded_exit(call(request), cleanup)
                    values[name] = await stack.enter_async_context(manager)
                else:
                    values[name] = await call(request)
            response = await direct.endpoint(**values)
        await response(scope, receive, send)
