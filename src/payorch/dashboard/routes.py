"""The dashboard's routes, one router per page area, mounted by payorch.app."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.dashboard import (
    activity,
    assets,
    deliveries,
    exports,
    holds,
    intent,
    keys,
    links,
    overview,
    payments,
    providers,
    reconciliation,
    recovery_pages,
    routing,
    sandbox,
    second_factor,
    signin,
    users,
    webhooks,
)
from payorch.dashboard.web import DashboardRoute, SignInRequired, current_viewer, not_found

_unknown = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)


@_unknown.api_route("/{rest:path}", methods=["GET", "POST"])
async def unknown_page(rest: str, request: Request) -> Response:
    try:
        await current_viewer(request)  # signed in: the 404 page keeps the navigation
    except SignInRequired:
        pass  # signed out: the same page without it (nothing about the application)
    return not_found(request)


ROUTERS = (
    signin.router,
    second_factor.router,
    recovery_pages.router,
    assets.router,
    overview.router,
    payments.router,
    exports.router,
    reconciliation.router,
    intent.router,
    holds.router,
    deliveries.router,  # before webhooks: /webhooks/deliveries is not an endpoint's id
    webhooks.router,
    providers.router,
    routing.router,
    keys.router,
    sandbox.router,
    links.router,
    users.router,
    activity.router,
    _unknown,  # the catch-all last
)
