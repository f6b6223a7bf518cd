"""Signing in to the dashboard over plain HTTP (httpx), as a browser's form posts would: as a
person (an owner invited through payorch.users' service, who accepts the invite, enrolls TOTP
and is then signed in), or with a SANDBOX key where PAYORCH_DASHBOARD_KEY_SIGN_IN allows.

A person is made once per application and client's runtime; signing in again as them types the
password and the TOTP code (one argon2 check, no new enrollment)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from payorch.auth.service import Caller
from payorch.clock import Clock, SystemClock
from payorch.runtime import Runtime
from payorch.users import service as users
from tests.kit import Sandbox
from tests.totp_codes import code_at

CSRF = re.compile(r'name="csrf" value="([^"]+)"')
TOTP_SECRET = re.compile(r'<code id="totp-secret"[^>]*>([A-Z2-7 ]+)</code>')
RECOVERY_CODE = re.compile(r"<li><code>([a-z2-9]{5}-[a-z2-9]{5})</code></li>")
PASSWORD = "a long enough test password"
OPERATOR = "operator"  # the credential id the operator's command line acts with


@dataclass(frozen=True)
class Person:
    email: str
    password: str
    totp_secret: str
    recovery_codes: tuple[str, ...]


_PEOPLE: dict[str, Person] = {}  # by application id


def csrf_of(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


def runtime_of(client: httpx.AsyncClient) -> Runtime | None:
    """The runtime of an in-process client (the suite's ``client`` fixture), else None."""
    app = getattr(client._transport, "app", None)
    runtime = getattr(getattr(app, "state", None), "runtime", None)
    return runtime if isinstance(runtime, Runtime) else None


def clock_of(client: httpx.AsyncClient) -> Clock:
    """The clock the server checks TOTP codes with (a test's frozen clock, in process)."""
    runtime = runtime_of(client)
    return runtime.clock if runtime is not None else SystemClock()


def code_now(client: httpx.AsyncClient, secret: str) -> str:
    return code_at(secret, clock_of(client).now())


async def invite(client: httpx.AsyncClient, app: Sandbox, email: str, role: str = "owner") -> str:
    """The invite URL of a new ``role`` of ``app``, made as the operator's command line does
    (an owner can be made only by an owner or the operator)."""
    runtime = runtime_of(client)
    if runtime is None:
        answer = await client.post(
            "/v1/admin/users", json={"email": email, "role": role}, headers=app.headers
        )
        assert answer.status_code == 201, answer.text
        return str(answer.json()["invite_url"])
    caller = Caller(app.application_id, "SANDBOX", OPERATOR)
    async with runtime.database.transaction() as conn:
        _, token = await users.invite(
            conn, runtime.clock, caller, email, role, limit=runtime.settings.max_users
        )
    return f"/dashboard/invite/{token}"


async def accept(client: httpx.AsyncClient, invite_url: str, password: str = PASSWORD) -> httpx.Response:
    """Sets the password on the invite's page; answers the page's redirect (or refusal)."""
    path = urlsplit(invite_url).path
    form = await client.get(path)
    assert form.status_code == 200, form.text
    data = {"csrf": csrf_of(form), "password": password, "password_again": password}
    return await client.post(path, data=data)


async def enroll_totp(client: httpx.AsyncClient) -> tuple[str, tuple[str, ...]]:
    """Enrolls an authenticator app from the enrollment page; returns its secret and the
    recovery codes shown once."""
    page = await client.get("/dashboard/sign-in/enroll")
    assert page.status_code == 200, page.text
    found = TOTP_SECRET.search(page.text)
    assert found, page.text
    secret = found.group(1).replace(" ", "")
    done = await client.post(
        "/dashboard/sign-in/enroll", data={"csrf": csrf_of(page), "code": code_now(client, secret)}
    )
    assert done.status_code == 200, done.text
    codes = tuple(RECOVERY_CODE.findall(done.text))
    assert len(codes) == 10, done.text
    return secret, codes


async def new_person(
    client: httpx.AsyncClient, app: Sandbox, email: str, role: str = "owner", password: str = PASSWORD
) -> Person:
    """A person of ``app`` who accepted their invite and enrolled TOTP: ``client`` is signed in
    as them."""
    accepted = await accept(client, await invite(client, app, email, role), password)
    assert accepted.status_code == 303, accepted.text
    assert accepted.headers["location"] == "/dashboard/sign-in/enroll", accepted.headers
    secret, codes = await enroll_totp(client)
    return Person(email, password, secret, codes)


async def password_step(
    client: httpx.AsyncClient, email: str, password: str, application_id: str = ""
) -> httpx.Response:
    form = await client.get("/dashboard/sign-in")
    assert form.status_code == 200, form.text
    data = {"csrf": csrf_of(form), "email": email, "password": password}
    if application_id:
        data["application_id"] = application_id
    return await client.post("/dashboard/sign-in", data=data)


async def second_factor_step(client: httpx.AsyncClient, code: str) -> httpx.Response:
    page = await client.get("/dashboard/sign-in/second-factor")
    assert page.status_code == 200, page.text
    return await client.post("/dashboard/sign-in/second-factor", data={"csrf": csrf_of(page), "code": code})


async def sign_in_as(client: httpx.AsyncClient, person: Person) -> None:
    """Password, then the TOTP code of now."""
    first = await password_step(client, person.email, person.password)
    assert first.status_code == 303, first.text
    assert first.headers["location"] == "/dashboard/sign-in/second-factor"
    second = await second_factor_step(client, code_now(client, person.totp_secret))
    assert second.status_code == 303, second.text
    assert second.headers["location"] == "/dashboard/overview"


async def sign_in(client: httpx.AsyncClient, app: Sandbox) -> str:
    """Signs ``client`` in as an owner of ``app`` (made on the first call); returns the
    session's CSRF token (from the overview)."""
    person = _PEOPLE.get(app.application_id)
    if person is None:
        person = _PEOPLE[app.application_id] = await new_person(
            client, app, f"owner-{app.application_id.lower()}@example.com"
        )
    else:
        await sign_in_as(client, person)
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200, overview.text
    return csrf_of(overview)


def person_of(app: Sandbox) -> Person:
    """The owner ``sign_in`` made for ``app``."""
    return _PEOPLE[app.application_id]


async def sign_in_with(client: httpx.AsyncClient, api_key: str) -> httpx.Response:
    """Posts the sign-in form with an API key (SANDBOX, PAYORCH_DASHBOARD_KEY_SIGN_IN=true)."""
    form = await client.get("/dashboard/sign-in")
    assert form.status_code == 200, form.text
    return await client.post("/dashboard/sign-in", data={"csrf": csrf_of(form), "api_key": api_key})


async def sign_in_with_key(client: httpx.AsyncClient, app: Sandbox) -> str:
    """Signs ``client`` in with ``app``'s key (a SANDBOX application; the module sets
    ``pytest.mark.settings(dashboard_key_sign_in=True)``): a session that is no person, with the
    key's scopes. Returns the session's CSRF token (from the overview)."""
    answer = await sign_in_with(client, app.api_key)
    assert answer.status_code == 303, answer.text
    overview = await client.get("/dashboard/overview")
    assert overview.status_code == 200, overview.text
    return csrf_of(overview)


async def assert_back_to_sign_in(client: httpx.AsyncClient) -> None:
    """The session is over: a page sends the browser to the sign-in form."""
    gone = await client.get("/dashboard/overview")
    assert gone.status_code == 303, gone.text
    assert gone.headers["location"] == "/dashboard/sign-in"
