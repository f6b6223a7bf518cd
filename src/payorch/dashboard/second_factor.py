"""The second factor of a dashboard sign-in, and its enrollment: these are the only pages a
PASSWORD-stage session opens (payorch.dashboard.sessions).

- A TOTP code, or a recovery code in its place (once), or a passkey (navigator.credentials.get,
  from assets/passkeys.js: no inline script).
- Enrollment, before any other page, for those who must (owners and admins, or everyone under
  PAYORCH_REQUIRE_MFA_FOR_ALL) and have no factor yet: an authenticator app (its secret drawn as
  a QR code, confirmed with a code) or a passkey (navigator.credentials.create); then ten
  recovery codes, shown once (/dashboard/recovery-codes also makes new ones).

The session keeps what the next step checks in its ``challenge`` column: "webauthn:<challenge>"
between a passkey's options and the browser's answer, "totp:<secret encrypted>" between the
enrollment page and the code that confirms it. A secret is shown on that page only, never logged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData
from starlette.responses import JSONResponse, Response

from payorch.dashboard import sessions
from payorch.dashboard.records import TOTP_CHALLENGE, PendingSession
from payorch.dashboard.recovery_pages import recovery_codes_page
from payorch.dashboard.signin import (
    ENROLL_PATH,
    REFUSED,
    SECOND_FACTOR_PATH,
    rules_of,
    sign_in_page,
    signed_out_page,
    too_many_attempts,
    with_session,
)
from payorch.dashboard.web import (
    SESSION_COOKIE,
    CsrfRefused,
    DashboardRoute,
    SignInRequired,
    back_to,
    base_url,
    field,
    render,
)
from payorch.http.deps import Conn, runtime_of
from payorch.runtime import Runtime
from payorch.users import passkeys, sign_in, sign_in_repository, totp
from payorch.users.records import User

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

_WEBAUTHN = "webauthn:"
# Before the second factor, a person enrolls only their first one (else the password alone
# would add a factor).
_ENROLLED = "A second factor is enrolled already: sign in with it."
_TOTP = TOTP_CHALLENGE


@dataclass(frozen=True, slots=True)
class Pending:
    """A PASSWORD-stage browser: its session and token."""

    session: PendingSession
    token: str
    runtime: Runtime

    @property
    def csrf(self) -> str:
        return sessions.csrf_of(self.token)


async def pending_session(request: Request) -> Pending:
    runtime = runtime_of(request)
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise SignInRequired()
    async with runtime.phases.reading() as conn:
        found = await sessions.find_pending(conn, runtime.clock, token)
    if found is None:  # signed in already, or ended: the sign-in form tells which
        raise SignInRequired(keep_cookie=True)
    return Pending(found, token, runtime)


PendingDep = Annotated[Pending, Depends(pending_session)]


def _csrf_matches(pending: Pending, submitted: object) -> bool:
    return sessions.csrf_matches(pending.token, submitted if isinstance(submitted, str) else None)


def _party(runtime: Runtime) -> passkeys.RelyingParty:
    return passkeys.RelyingParty.of(runtime.settings.public_url)


async def _user_of(conn: AsyncConnection, pending: Pending) -> User | None:
    """The person, if they still may sign in (else the session is closed: back to sign-in)."""
    session, runtime = pending.session, pending.runtime
    try:
        return await sign_in.pending_user(
            conn, runtime.clock, rules_of(runtime), session.application_id, session.user_id
        )
    except sign_in.SignInRefused:
        await sessions.close_session(conn, pending.token)
        return None


async def _person_at(
    request: Request, conn: AsyncConnection, pending: Pending, *, enrolled: bool
) -> User | Response:
    """The person, if they still may sign in and are at the right step (``enrolled``: a second
    factor to check; else none yet, to enroll); otherwise the page to go to."""
    user = await _user_of(conn, pending)
    if user is None:
        return _refused(request)
    if await sign_in.has_second_factor(conn, user) != enrolled:
        return back_to(request, SECOND_FACTOR_PATH if not enrolled else ENROLL_PATH)
    return user


async def _checked_form(request: Request, pending: Pending) -> FormData:
    """The POSTed form, once its CSRF token is the session's (else CsrfRefused: 403)."""
    form = await request.form()
    if not _csrf_matches(pending, form.get("csrf")):
        raise CsrfRefused()
    return form


def _refused(request: Request) -> Response:
    return signed_out_page(request, sign_in_page(request, 401, REFUSED))


async def _signed_in(
    conn: AsyncConnection, pending: Pending, user: User, method: sign_in.Method, response: Response
) -> Response:
    """``response``, with the cookie of the ACTIVE session that replaces the pending one."""
    runtime = pending.runtime
    await sign_in.signed_in(conn, runtime.clock, user, method)
    token = await sessions.activate(conn, runtime.clock, pending.token, pending.session, runtime.settings)
    return with_session(response, runtime, token)


# -- the second factor ------------------------------------------------------------------------------


async def _second_factor_page(
    request: Request,
    conn: AsyncConnection,
    pending: Pending,
    user: User,
    status_code: int = 200,
    error: str = "",
) -> Response:
    return render(
        request,
        "second_factor.html",
        status_code=status_code,
        title="Second factor",
        form_csrf=pending.csrf,
        error=error,
        email=user.email,
        has_totp=await sign_in.has_totp(conn, user),
        has_passkey=await sign_in.has_passkey(conn, user),
    )


@router.get(SECOND_FACTOR_PATH)
async def second_factor_form(request: Request, pending: PendingDep, conn: Conn) -> Response:
    user = await _person_at(request, conn, pending, enrolled=True)
    if isinstance(user, Response):
        return user
    return await _second_factor_page(request, conn, pending, user)


@router.post(SECOND_FACTOR_PATH)
async def second_factor(request: Request, pending: PendingDep, conn: Conn) -> Response:
    runtime = pending.runtime
    form = await _checked_form(request, pending)
    too_many = await too_many_attempts(request, runtime)
    if too_many is not None:
        return too_many
    user = await _person_at(request, conn, pending, enrolled=True)
    if isinstance(user, Response):
        return user
    try:
        method = await sign_in.check_code(
            conn, runtime.clock, rules_of(runtime), runtime.cipher, user, field(form, "code")
        )
    except sign_in.SecondFactorRefused as refused:
        if refused.locked:
            await sessions.close_session(conn, pending.token)
            return _refused(request)
        error = "That code did not work. Type the code your app shows now, or a recovery code."
        return await _second_factor_page(request, conn, pending, user, 401, error)
    return await _signed_in(conn, pending, user, method, back_to(request, "/overview"))


@router.post("/sign-in/cancel")
async def cancel(request: Request, pending: PendingDep, conn: Conn) -> Response:
    """Ends the PASSWORD-stage session: the sign-in form again."""
    await _checked_form(request, pending)
    await sessions.close_session(conn, pending.token)
    return signed_out_page(request, back_to(request, "/sign-in"))


# -- passkeys: options for navigator.credentials, and the browser's answer ---------------------------


async def _json_body(request: Request) -> dict[str, object]:
    try:
        body = json.loads(await request.body())
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _json_refused(message: str, status_code: int = 400) -> Response:
    return JSONResponse({"error": message}, status_code=status_code)


async def _options(request: Request, conn: AsyncConnection, pending: Pending, registering: bool) -> Response:
    body = await _json_body(request)
    if not _csrf_matches(pending, body.get("csrf")):
        return _json_refused("This page expired: reload it.", 403)
    user = await _user_of(conn, pending)
    if user is None:
        return _json_refused(REFUSED, 401)
    party = _party(pending.runtime)
    if registering and await sign_in.has_second_factor(conn, user):
        return _json_refused(_ENROLLED, 409)  # another factor is added once signed in with one
    if registering:
        options = await sign_in.passkey_registration_options(conn, party, user)
    else:
        options = await sign_in.passkey_sign_in_options(conn, party, user)
    await sessions.keep_challenge(conn, pending.token, _WEBAUTHN + options.challenge)
    return Response(options.json, media_type="application/json")


async def _answer(request: Request, pending: Pending) -> tuple[str, str] | None:
    """The browser's answer (JSON text) and the challenge it answers, once (the challenge is
    forgotten), or None if the CSRF token or the challenge is missing."""
    body = await _json_body(request)
    credential = body.get("credential")
    challenge = pending.session.challenge or ""
    if not _csrf_matches(pending, body.get("csrf")) or not challenge.startswith(_WEBAUTHN):
        return None
    if not isinstance(credential, dict):
        return None
    return json.dumps(credential), challenge.removeprefix(_WEBAUTHN)


async def _answering_person(
    request: Request, conn: AsyncConnection, pending: Pending
) -> tuple[User, str, str] | Response:
    """The person, the browser's answer and its challenge (forgotten: one answer per challenge);
    or the JSON refusal: the page expired (403), or they may no longer sign in (401)."""
    answered = await _answer(request, pending)
    await sessions.keep_challenge(conn, pending.token, None)  # one answer per challenge
    if answered is None:
        return _json_refused("This page expired: reload it.", 403)
    user = await _user_of(conn, pending)
    if user is None:
        return _json_refused(REFUSED, 401)
    return user, *answered


@router.post(SECOND_FACTOR_PATH + "/passkey-options")
async def passkey_options(request: Request, pending: PendingDep, conn: Conn) -> Response:
    return await _options(request, conn, pending, registering=False)


@router.post(SECOND_FACTOR_PATH + "/passkey")
async def passkey_sign_in(request: Request, pending: PendingDep, conn: Conn) -> Response:
    runtime = pending.runtime
    answering = await _answering_person(request, conn, pending)
    if isinstance(answering, Response):
        return answering
    user, answer, challenge = answering
    party = _party(runtime)
    try:
        method = await sign_in.check_passkey(
            conn, runtime.clock, rules_of(runtime), party, user, challenge, answer
        )
    except sign_in.SecondFactorRefused as refused:
        if refused.locked:
            await sessions.close_session(conn, pending.token)
            return _json_refused(REFUSED, 401)
        return _json_refused("That passkey did not sign in. Try again, or type a code.", 401)
    location = {"location": base_url(request) + "/overview"}
    return await _signed_in(conn, pending, user, method, JSONResponse(location))


# -- enrollment ------------------------------------------------------------------------------------


async def _enroll_totp_page(
    request: Request,
    conn: AsyncConnection,
    pending: Pending,
    user: User,
    status_code: int = 200,
    error: str = "",
    secret: str | None = None,
) -> Response:
    """The QR code and text of ``secret``, or of a new secret kept (encrypted) until confirmed."""
    runtime = pending.runtime
    if secret is None:
        secret = totp.new_secret()
        await sessions.keep_challenge(conn, pending.token, _TOTP + runtime.cipher.encrypt(secret))
    names = await sign_in_repository.application_names(conn, [user.application_id])
    uri = totp.provisioning_uri(secret, user.email, names.get(user.application_id, user.application_id))
    return render(
        request,
        "enroll_totp.html",
        status_code=status_code,
        title="Set up a second factor",
        form_csrf=pending.csrf,
        error=error,
        email=user.email,
        qr=totp.qr_data_uri(uri),
        secret=totp.spaced(secret),
    )


@router.get(ENROLL_PATH)
async def enroll_form(request: Request, pending: PendingDep, conn: Conn) -> Response:
    user = await _person_at(request, conn, pending, enrolled=False)
    if isinstance(user, Response):
        return user  # enrolled already: the second factor is asked for instead
    return await _enroll_totp_page(request, conn, pending, user)


@router.post(ENROLL_PATH)
async def enroll_totp(request: Request, pending: PendingDep, conn: Conn) -> Response:
    runtime = pending.runtime
    form = await _checked_form(request, pending)
    user = await _person_at(request, conn, pending, enrolled=False)
    if isinstance(user, Response):
        return user
    kept = pending.session.challenge or ""
    if not kept.startswith(_TOTP):
        return await _enroll_totp_page(
            request, conn, pending, user, 400, "The page expired: scan the new code."
        )
    secret = runtime.cipher.decrypt(kept.removeprefix(_TOTP))
    if not await sign_in.enroll_totp(conn, runtime.clock, runtime.cipher, user, secret, field(form, "code")):
        # The same secret again: the person's app may hold it already.
        error = "That code did not match. Type the 6 digits your app shows now."
        return await _enroll_totp_page(request, conn, pending, user, 400, error, secret)
    page = await recovery_codes_page(request, conn, runtime, user, first=True)
    return await _signed_in(conn, pending, user, "totp", page)


@router.get(ENROLL_PATH + "/passkey")
async def enroll_passkey_form(request: Request, pending: PendingDep, conn: Conn) -> Response:
    user = await _person_at(request, conn, pending, enrolled=False)
    if isinstance(user, Response):
        return user
    return render(
        request, "enroll_passkey.html", title="Set up a passkey", form_csrf=pending.csrf, email=user.email
    )


@router.post(ENROLL_PATH + "/passkey-options")
async def enroll_passkey_options(request: Request, pending: PendingDep, conn: Conn) -> Response:
    return await _options(request, conn, pending, registering=True)


@router.post(ENROLL_PATH + "/passkey")
async def enroll_passkey(request: Request, pending: PendingDep, conn: Conn) -> Response:
    runtime = pending.runtime
    answering = await _answering_person(request, conn, pending)
    if isinstance(answering, Response):
        return answering
    user, answer, challenge = answering
    if await sign_in.has_second_factor(conn, user):
        return _json_refused(_ENROLLED, 409)
    try:
        await sign_in.enroll_passkey(conn, runtime.clock, _party(runtime), user, challenge, answer)
    except passkeys.PasskeyRefused:
        return _json_refused("The passkey was not created. Try again.", 400)
    location = {"location": base_url(request) + "/recovery-codes"}
    return await _signed_in(conn, pending, user, "passkey", JSONResponse(location))
