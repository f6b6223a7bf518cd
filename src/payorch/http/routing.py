"""Routers mounted flat: every route straight on the app's router, none behind an included router.

FastAPI's ``include_router`` keeps the router it includes as one nested route, and a request
to it is matched at the app's level and again inside, and handled through a further frame for
each level: work that every request, and every resumption of a request's task after a database
round trip, paid again (docs/performance-decisions.md, "Routes mounted flat"). payorch's routers carry
everything of their own (prefix, tags, route class) on each route, so their routes can be the
app's own; a router that includes another is refused rather than mounted half. Each API route
mounted refuses a repeated single-valued query parameter (payorch.http.single_values).
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.routing import Mount, Route, WebSocketRoute

from payorch.http.single_values import refuse_repeats

_FLAT_ROUTES = (APIRoute, Route, Mount, WebSocketRoute)


def mount(app: FastAPI, *routers: APIRouter) -> None:
    """Add each router's routes to ``app``, in order, after those it has."""
    for router in routers:
        for route in router.routes:
            if not isinstance(route, _FLAT_ROUTES):
                raise TypeError(f"{type(route).__name__} in a mounted router: mount its routers flat")
            if isinstance(route, APIRoute):
                refuse_repeats(route)
            app.router.routes.append(route)
