"""Signing in to the dashboard: a person's email and password (then a second factor:
payorch.dashboard.second_factor), an invite's page that sets the password, a SANDBOX key behind
PAYORCH_DASHBOARD_KEY_SIGN_IN, sign-out, and the dashboard's root.

Every refusal of an email and password reads the same (wrong email, wrong password, locked
account), and the per-address limiter (PAYORCH_DASHBOARD_SIGN_IN_RATE_LIMIT) counts each try
besides the per-account lock (payorch.users.sign_in)."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import Response

from payorch.dashboard import sessions
from payorch.dashboard.records import Stage
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
from payorch.errors import ApiError, AuthenticationFailed
from payorch.http.deps import Conn, runtime_of
from payorch.ratelimit.limiter import client_address
from payorch.runtime import Runtime
from payorch.users import passwords, sign_in
from payorch.users import service as users
from payorch.users.records import User

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

REFUSED = (
    "That email and password do not match an account that may sign in, or the account is locked "
    "for a while after too many tries. Check them, or try again later."
)
SECOND_FACTOR_PATH = "/sign-in/second-factor"
ENROLL_PATH = "/sign-in/enroll"


def rules_of(runtime: Runtime) -> sign_in.Rules:
    settings = runtime.settings
    return sign_in.Rules(
        settings.sign_in_max_failures, settings.sign_in_lock_seconds, settings.require_mfa_for_all
    )


def _secure(runtime: Runtime) -> bool:
    return runtime.settings.public_url.startswith("https://")


def with_session(response: Response, runtime: Runtime, token: str) -> Response:
    """``response`` sets the session cookie (and drops the sign-in form's)."""
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


def signed_out_page(request: Request, response: Response) -> Response:
    response.delete_cookie(SESSION_COOKIE, path="/dashboard")
    return response


def pre_session_page(
    request: Request, template: str, title: str, status_code: int = 200, **context: object
) -> Response:
    """A form shown before any session: its CSRF token is the double submit of a random cookie."""
    runtime = runtime_of(request)
    token = request.cookies.get(SIGN_IN_COOKIE) or sessions.new_token()
    page = render(request, template, None, status_code, title=title, form_csrf=token, **context)
    page.set_cookie(
        SIGN_IN_COOKIE, token, httponly=True, samesite="strict", secure=_secure(runtime), path="/dashboard"
    )
    return page


def _pre_session_token_matches(request: Request, form: FormData) -> bool:
    expected = request.cookies.get(SIGN_IN_COOKIE) or ""
    # As bytes: compare_digest raises TypeError for a str holding a non-ASCII character.
    return bool(expected) and hmac.compare_digest(expected.encode(), field(form, "csrf").encode())


def sign_in_page(request: Request, status_code: int = 200, error: str = "", email: str = "") -> Response:
    return pre_session_page(
        request,
        "sign_in.html",
        "Sign in",
        status_code,
        error=error,
        email=email,
        key_sign_in=runtime_of(request).settings.dashboard_key_sign_in,
    )


async def too_many_attempts(request: Request, runtime: Runtime) -> Response | None:
    """Counts an attempt of the client's address; the 429 form past the limit."""
    decision = await runtime.rate_limiter.hit_sign_in(client_address(request.scope))
    if decision.allowed:
        return None
    error = f"Too many sign-in attempts. Try again in {decision.reset_seconds} seconds."
    page = sign_in_page(request, 429, error)
    page.headers["Retry-After"] = str(decision.reset_seconds)
    return page


@router.get("")
async def root(request: Request, viewer: ViewerDep) -> Response:
    return back_to(request, "/overview")


@router.get("/sign-in")
async def sign_in_form(request: Request) -> Response:
    runtime = runtime_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        idle = runtime.settings.dashboard_idle_seconds
        async with runtime.phases.reading() as conn:
            pending = await sessions.find_pending(conn, runtime.clock, token)
            active = None if pending else await sessions.find_session(conn, runtime.clock, token, idle)
        if pending is not None:  # the password was right: the second factor is next
            return back_to(request, SECOND_FACTOR_PATH)
        if active is not None:
            return back_to(request, "/overview")
    return sign_in_page(request)


@router.post("/sign-in")
async def sign_in_post(request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    form = await request.form()
    if not _pre_session_token_matches(request, form):
        return sign_in_page(request, 403, "The form expired. Sign in again.")
    too_many = await too_many_attempts(request, runtime)
    if too_many is not None:
        return too_many
    if "api_key" in form:
        return await _key_sign_in(request, conn, runtime, field(form, "api_key"))
    email = field(form, "email")
    password = form.get("password")
    password = password if isinstance(password, str) else ""
    try:
        found = await sign_in.check_password(
            conn, runtime.clock, rules_of(runtime), email, password, field(form, "application_id")
        )
    except sign_in.SignInRefused:
        return sign_in_page(request, 401, REFUSED, email)
    if isinstance(found, sign_in.ChooseApplication):
        return pre_session_page(
            request, "sign_in_choose.html", "Choose an application", email=email, choices=found.applications
        )
    return await _password_matched(request, conn, runtime, found, password)


async def _password_matched(
    request: Request, conn: AsyncConnection, runtime: Runtime, user: User, password: str | None
) -> Response:
    """The password was right: a second factor next (or its enrollment), or signed in."""
    rules = rules_of(runtime)
    if await sign_in.needs_second_factor(conn, rules, user):
        stage: Stage = "PASSWORD"
        target = SECOND_FACTOR_PATH if await sign_in.has_second_factor(conn, user) else ENROLL_PATH
    else:
        stage, target = "ACTIVE", "/overview"
        await sign_in.signed_in(conn, runtime.clock, user, "password", password=password)
    token = await sessions.open_person_session(
        conn, runtime.clock, user.application_id, user.id, stage, runtime.settings
    )
    return with_session(back_to(request, target), runtime, token)


async def _key_sign_in(request: Request, conn: AsyncConnection, runtime: Runtime, api_key: str) -> Response:
    if not runtime.settings.dashboard_key_sign_in:
        return sign_in_page(
            request, 403, "Signing in with an API key is turned off: sign in with your email."
        )
    try:
        caller = await runtime.authenticator.authenticate("Bearer " + api_key)
    except AuthenticationFailed:
        return sign_in_page(request, 401, "That API key is unknown or revoked. Paste a whole key.")
    if not caller.is_sandbox:
        message = "A PRODUCTION application's key does not sign in to the dashboard: sign in with your email."
        return sign_in_page(request, 403, message)
    if caller.scopes is not None:
        # Only a key with every scope signs in (a restricted key's work is the API's).
        return sign_in_page(request, 403, "A key with scopes cannot sign in to the dashboard.")
    token = await sessions.open_key_session(conn, runtime.clock, caller, runtime.settings)
    return with_session(back_to(request, "/overview"), runtime, token)


@router.post("/sign-out")
async def sign_out(request: Request, viewer: ViewerDep, form: FormDep, conn: Conn) -> Response:
    caller = viewer.caller
    if caller.user_id is not None:
        await sign_in.signed_out(conn, viewer.runtime.clock, caller.application_id, caller.user_id)
    await sessions.close_session(conn, viewer.token)
    return signed_out_page(request, back_to(request, "/sign-in"))


# -- an invite: the person sets their password ----------------------------------------------------


def _invite_page(
    request: Request, token: str, status_code: int = 200, error: str = "", email: str = ""
) -> Response:
    return pre_session_page(
        request,
        "invite.html",
        "Set your password",
        status_code,
        error=error,
        email=email,
        token=token,
        min_length=passwords.MIN_LENGTH,
    )


_INVITE_GONE = "This invite link is unknown, already used or expired. Ask an owner or admin for a new one."


@router.get("/invite/{token}")
async def invite_form(token: str, request: Request) -> Response:
    runtime = runtime_of(request)
    async with runtime.phases.reading() as conn:
        invited = await users.find_invite(conn, runtime.clock, token)
    if invited is None:
        return render(
            request, "message.html", status_code=404, title="Invite not valid", message=_INVITE_GONE
        )
    return _invite_page(request, token, email=invited.email)


@router.post("/invite/{token}")
async def accept_invite(token: str, request: Request, conn: Conn) -> Response:
    runtime = runtime_of(request)
    form = await request.form()
    if not _pre_session_token_matches(request, form):
        return _invite_page(request, token, 403, "The form expired. Enter your password again.")
    password, again = form.get("password"), form.get("password_again")
    if not isinstance(password, str) or not isinstance(again, str) or password != again:
        return _invite_page(request, token, 400, "The two passwords differ. Type the same password twice.")
    problem = passwords.password_problem(password)
    if problem is not None:
        return _invite_page(request, token, 400, f"The password {problem}.")
    try:
        user = await users.accept_invite(conn, runtime.clock, token, password)
    except ApiError:
        return render(
            request, "message.html", status_code=404, title="Invite not valid", message=_INVITE_GONE
        )
    return await _password_matched(request, conn, runtime, user, None)
