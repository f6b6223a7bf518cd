"""Sign-in with an application's API key, sign-out, and the dashboard's root."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.dashboard import sessions
from payorch.dashboard.web import (
    SESSION_COOKIE,
    SIGN_IN_COOKIE,
    DashboardRoute,
    FormDep,
    ViewerDep,
    back_to,
    field,
    render,
)
from payorch.errors import AuthenticationFailed
from payorch.http.deps import Conn, runtime_of
from payorch.ratelimit.limiter import client_address
from payorch.runtime import Runtime

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)


def _secure(runtime: Runtime) -> bool:
    return runtime.settings.public_url.startswith("https://")


@router.get("")
async def root(request: Request, viewer: ViewerDep) -> Response:
    return back_to(request, "/overview")


def _form(request: Request, runtime: Runtime, status_code: int = 200, error: str = "") -> Response:
    token = request.cookies.get(SIGN_IN_COOKIE) or sessions.new_token()
    page = render(
        request, "sign_in.html", status_code=status_code, title="Sign in", sign_in_token=token, error=error
    )
    page.set_cookie(
        SIGN_IN_COOKIE, token, httponly=True, samesite="strict", secure=_secure(runtime), path="/dashboard"
    )
    return page


@router.get("/sign-in")
async def sign_in_form(request: Request) -> Response:
    runtime = runtime_of(request)
    return _form(request, runtime)


@router.post("/sign-in")
async def sign_in(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    form = await request.form()
    expected = request.cookies.get(SIGN_IN_COOKIE) or ""
    # As bytes: compare_digest raises TypeError for a str holding a non-ASCII character.
    if not expected or not hmac.compare_digest(expected.encode(), field(form, "csrf").encode()):
        return _form(request, runtime, 403, "The form expired. Enter the key again.")
    decision = await runtime.rate_limiter.hit_sign_in(client_address(request.scope))
    if not decision.allowed:
        error = f"Too many sign-in attempts. Try again in {decision.reset_seconds} seconds."
        page = _form(request, runtime, 429, error)
        page.headers["Retry-After"] = str(decision.reset_seconds)
        return page
    try:
        caller = await runtime.authenticator.authenticate("Bearer " + field(form, "api_key"))
    except AuthenticationFailed:
        return _form(request, runtime, 401, "That API key is unknown or revoked. Paste a whole key.")
    if caller.scopes is not None:
        # A session holds no scopes of a key's: a restricted key would act with every scope here.
        return _form(request, runtime, 403, "A key with scopes cannot sign in to the dashboard.")
    token = await sessions.open_session(
        conn, runtime.clock, caller, runtime.settings.dashboard_session_seconds
    )
    response = back_to(request, "/overview")
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=runtime.settings.dashboard_session_seconds,
        httponly=True,
        samesite="lax",
        secure=_secure(runtime),
        path="/dashboard",
    )
    response.delete_cookie(SIGN_IN_COOKIE, path="/dashboard")
    return response


@router.post("/sign-out")
async def sign_out(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    await sessions.close_session(conn, viewer.token)
    response = back_to(request, "/sign-in")
    response.delete_cookie(SESSION_COOKIE, path="/dashboard")
    return response
