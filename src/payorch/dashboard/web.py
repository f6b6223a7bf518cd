"""What every dashboard page shares: templates, security headers, the signed-in viewer, CSRF
checks on forms, and the route class that turns errors into pages (sign-in, 404, a message)."""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated

from babel.dates import format_timedelta
from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from pydantic import ValidationError
from starlette.datastructures import FormData
from starlette.responses import HTMLResponse, RedirectResponse, Response

from payorch.access.pages import ACTIONS, PUBLIC, REFUSED, scope_of
from payorch.access.roles import ROLE_SCOPES, scopes_of
from payorch.amount_text import DASHBOARD_LOCALE, written
from payorch.auth.service import Caller
from payorch.dashboard import sessions
from payorch.errors import ApiError, ResourceNotFound
from payorch.http.deps import runtime_of
from payorch.runtime import Runtime

SESSION_COOKIE = "payorch_session"
SIGN_IN_COOKIE = "payorch_sign_in"  # pre-session CSRF token of the sign-in form (double submit)
# No inline script or style: every asset is the service's own (/dashboard/assets/...).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def money(amount: int | None, currency: str) -> str:
    """An amount in minor units as people read it (payorch.amount_text): 1050 USD -> $10.50."""
    return "—" if amount is None else written(amount, currency)


def utc(moment: datetime | None) -> str:
    """Times are shown in UTC with the zone written out."""
    return "—" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def deadline(moment: datetime | None, now: datetime) -> str:
    """A time to act by, in UTC and how far off it is (Babel): '2026-12-12 10:00:00 UTC (in 6
    days)', or '(3 hours ago)' once past."""
    if moment is None:
        return "—"
    # threshold 2: a unit is used from two of it, so 6 days 23 hours reads "in 7 days", not "in 1 week"
    far = format_timedelta(moment - now, threshold=2, add_direction=True, locale=DASHBOARD_LOCALE)
    return f"{utc(moment)} ({far})"


def breakable(text: object) -> Markup:
    """An id or event name that may wrap only after its separators (payment_intent.<wbr>created),
    never in the middle of a word."""
    if text is None:
        return Markup("—")
    return Markup("<wbr>").join(re.split(r"(?<=[_./])", str(text)))  # join escapes each part


_ENV.filters["money"] = money
_ENV.filters["utc"] = utc
_ENV.filters["deadline"] = deadline
_ENV.filters["breakable"] = breakable


class SignInRequired(Exception):
    """No session for this page: the browser goes to the sign-in form, which sends a session on
    to where it may go (a PASSWORD-stage one to its second factor, an ACTIVE one to the
    overview); ``keep_cookie`` for those, else the cookie is deleted."""

    def __init__(self, keep_cookie: bool = False) -> None:
        super().__init__("sign in")
        self.keep_cookie = keep_cookie


class CsrfRefused(Exception):
    """A form that changes something came without its session's token."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """The signed-in browser: the application it acts for, as an API caller."""

    caller: Caller
    token: str
    runtime: Runtime

    @property
    def csrf(self) -> str:
        return sessions.csrf_of(self.token)

    def may(self, method: str, path: str) -> bool:
        """Whether this viewer may use the route (``method``, ``path`` under /dashboard as the
        route declares it): the navigation and the buttons ask, the route refuses all the same."""
        needed = scope_of(method, path)
        return needed != REFUSED and (needed == PUBLIC or self.caller.permits(needed))


async def current_viewer(request: Request) -> Viewer:
    """The signed-in browser, acting as its person (with the scopes of the role they hold now)
    or as its key (SANDBOX only, while PAYORCH_DASHBOARD_KEY_SIGN_IN allows)."""
    known = getattr(request.state, "viewer", None)
    if isinstance(known, Viewer):  # already found for this request (the route's scope check)
        return known
    runtime = runtime_of(request)
    phases = runtime.phases
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise SignInRequired()
    settings = runtime.settings
    async with phases.reading() as conn:
        found = await sessions.find_session(conn, runtime.clock, token, settings.dashboard_idle_seconds)
    if found is None:
        async with phases.reading() as conn:
            pending = await sessions.find_pending(conn, runtime.clock, token)
        raise SignInRequired(pending is not None)
    if found.credential_id is not None:
        if not (settings.dashboard_key_sign_in and found.environment == "SANDBOX"):
            raise SignInRequired()
        caller = Caller(found.application_id, found.environment, found.credential_id, found.key_scopes)
    else:
        caller = Caller(
            found.application_id,
            found.environment,
            "",
            scopes_of(found.role or ""),
            user_id=found.user_id,
            email=found.email,
        )
    if sessions.needs_touch(found, runtime.clock):
        async with phases.transaction() as conn:
            await sessions.touch(conn, runtime.clock, found)
    viewer = Viewer(caller, token, runtime)
    request.state.viewer = viewer  # error pages keep the navigation
    return viewer


ViewerDep = Annotated[Viewer, Depends(current_viewer)]


async def checked_form(request: Request, viewer: ViewerDep) -> FormData:
    """The posted form, after its CSRF token matched the session's."""
    form = await request.form()
    submitted = form.get("csrf")
    if not sessions.csrf_matches(viewer.token, submitted if isinstance(submitted, str) else None):
        raise CsrfRefused()
    return form


FormDep = Annotated[FormData, Depends(checked_form)]


def field(form: FormData, name: str) -> str:
    """A text field of ``form`` ('' when absent), stripped."""
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def base_url(request: Request) -> str:
    return f"{request.scope.get('root_path', '')}/dashboard"


def render(
    request: Request,
    template: str,
    viewer: Viewer | None = None,
    status_code: int = 200,
    **context: object,
) -> HTMLResponse:
    html = _ENV.get_template(template).render(
        base=base_url(request),
        viewer=viewer,
        csrf=viewer.csrf if viewer else "",
        path=request.url.path,
        notice=request.query_params.get("notice", ""),  # what the form before the redirect did
        **context,
    )
    return HTMLResponse(html, status_code=status_code)


def back_to(request: Request, path: str) -> RedirectResponse:
    """After a form: 303 to a dashboard page (POST, then GET: a reload does not resubmit)."""
    return RedirectResponse(base_url(request) + path, status_code=303)


def secure_headers(
    response: Response, policy: str = CONTENT_SECURITY_POLICY, referrer: str = "same-origin"
) -> Response:
    """The headers of every page of ours (the payment links' buyer pages name their own policy
    and send no referrer: payorch.links.buyer_render)."""
    response.headers["Content-Security-Policy"] = policy
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = referrer
    response.headers.setdefault("Cache-Control", "no-store")
    return response


def _message(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    viewer = getattr(request.state, "viewer", None)
    return render(
        request,
        "message.html",
        viewer if isinstance(viewer, Viewer) else None,
        status_code=status,
        title=title,
        message=message,
    )


def _problems(errors: Sequence[object]) -> str:
    """Pydantic's errors as "field: what is wrong" (the form's or the query's field names)."""
    said = []
    for error in errors:
        if isinstance(error, dict):
            where = ".".join(str(p) for p in error.get("loc", ()) if p not in ("body", "query"))
            said.append(f"{where or 'form'}: {error.get('msg', '')}")
    return "; ".join(said)


def _error_page(request: Request, exc: Exception) -> Response:
    if isinstance(exc, SignInRequired):
        response: Response = back_to(request, "/sign-in")
        if not exc.keep_cookie:
            response.delete_cookie(SESSION_COOKIE, path="/dashboard")
        return response
    if isinstance(exc, CsrfRefused):
        message = "This form was not sent from your dashboard session. Reload the page and send it again."
        return _message(request, 403, "Form expired", message)
    if isinstance(exc, ResourceNotFound):
        return not_found(request)
    if isinstance(exc, RequestValidationError | ValidationError):
        return _message(request, 400, "Check what you entered", _problems(exc.errors()))
    if isinstance(exc, ApiError):
        page = _message(request, exc.status, "Not done", exc.message)
        if "Retry-After" in exc.headers():  # 429, 503: the browser (or a person) knows when
            page.headers["Retry-After"] = exc.headers()["Retry-After"]
        return page
    raise exc


def not_found(request: Request) -> HTMLResponse:
    viewer = getattr(request.state, "viewer", None)  # signed in: the page keeps the navigation
    return render(
        request,
        "message.html",
        viewer if isinstance(viewer, Viewer) else None,
        status_code=404,
        title="Not found",
        message="There is nothing here for this application. Check the id, or go back to the payments list.",
    )


def refusal(caller: Caller, scope: str) -> str:
    """Why a page or form is refused to ``caller``, in the words of payorch.access.pages."""
    if scope == REFUSED:
        return "This page does not say which permission it needs, so it is refused to everyone."
    action = ACTIONS.get(scope, f"use {scope}")
    if caller.user_id is None:
        return f"The API key of this session cannot {action}. Ask an owner or admin for a key that can."
    # A person's scopes are their role's (payorch.access.roles.scopes_of).
    roles = [role for role, scopes in ROLE_SCOPES.items() if scopes == caller.scopes]
    who = f"Your role ({roles[0]})" if roles else "Your role"
    return f"{who} cannot {action}. Ask an owner or admin."


async def _refused(request: Request, path: str) -> Response | None:
    """The 403 page when the viewer may not use the route at ``path`` (under /dashboard, as
    declared) with the request's method (payorch.access.pages), else None: checked before the
    route reads its form, so a refused form changes nothing."""
    needed = scope_of(request.method, path)
    if needed == PUBLIC:
        return None
    viewer = await current_viewer(request)  # SignInRequired: to the sign-in form
    if needed != REFUSED and viewer.caller.permits(needed):
        return None
    return _message(request, 403, "Not allowed", refusal(viewer.caller, needed))


class DashboardRoute(APIRoute):
    """Every dashboard answer gets the security headers; errors become pages; a route runs only
    for a viewer whose scopes hold the one payorch.access.pages names for it (deny by default)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[None, None, Response]]:
        handler = super().get_route_handler()
        path = self.path_format.removeprefix("/dashboard")

        async def page(request: Request) -> Response:
            try:
                response = await _refused(request, path) or await handler(request)
            except (SignInRequired, CsrfRefused, ApiError, RequestValidationError, ValidationError) as exc:
                response = _error_page(request, exc)
            return secure_headers(response)

        return page
