"""The dashboard's Users page over HTTP, on SQLite and PostgreSQL, signed in as a person: an
invite (its link shown once and working), a role change, disable and enable, removal, paging,
and the users service's rules answered on the page with their status and nothing changed (a
duplicate or bad email, an unknown role; only an owner makes or changes an owner; the last active
owner cannot be demoted, disabled or removed); the empty state of a SANDBOX key's session."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.auth.service import Caller
from payorch.runtime import Runtime
from payorch.users import service
from payorch.users.invites import INVITE_PATH
from payorch.users.records import User
from tests.dashboard.roles_world import sign_in_as_role
from tests.dashboard.signing import person_of, sign_in, sign_in_with_key
from tests.kit import Sandbox
from tests.pages import dashboard_walk

INVITE_URL = re.compile(r'<code id="secret">([^<]+)</code>')
EMAILS = re.compile(r'<td class="row-title mono"><span>([^<( ]+)')
OLDER = re.compile(r'href="(/dashboard/users\?[^"]*cursor=[^"]+)">Older users')

pytestmark = [
    pytest.mark.settings(max_users=40),
    pytest.mark.usefixtures("passwords_hashed_once"),  # people made only to sign in
]


async def _users(runtime: Runtime, app: Sandbox) -> dict[str, User]:
    async with runtime.phases.reading() as conn:
        return {
            user.email: user for user in (await service.list_users(conn, _operator(app), None, 100)).items
        }


def _operator(app: Sandbox) -> Caller:
    """The operator's command line: it may make owners (the setup of a test, not under test)."""
    return Caller(app.application_id, "SANDBOX", "operator")


async def _active(runtime: Runtime, app: Sandbox, email: str, role: str) -> User:
    """An ACTIVE person of ``app``, made through the users service (invite, accept)."""
    async with runtime.phases.transaction() as conn:
        user, token = await service.invite(conn, runtime.clock, _operator(app), email, role, limit=40)
        return await service.accept_invite(conn, runtime.clock, token, "a long enough password")


async def _invite(client: httpx.AsyncClient, csrf: str, email: str, role: str) -> httpx.Response:
    return await client.post("/dashboard/users", data={"csrf": csrf, "email": email, "role": role})


async def test_invite_from_the_page_shows_the_link_once_and_it_works(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    csrf = await sign_in(client, sandbox)  # an owner
    page = await client.get("/dashboard/users")
    assert page.status_code == 200, page.text
    assert f"{person_of(sandbox).email} (you)" in page.text
    assert '<label for="invite-email">Email</label>' in page.text
    assert '<label for="invite-role">Role</label>' in page.text

    made = await _invite(client, csrf, "  Ana@Example.com ", "developer")
    assert made.status_code == 200, made.text
    assert made.headers["cache-control"] == "no-store"
    link = INVITE_URL.search(made.text)
    assert link and INVITE_PATH in link.group(1)
    token = link.group(1).rsplit("/", 1)[1]
    async with runtime.phases.reading() as conn:
        invited = await service.find_invite(conn, runtime.clock, token)
    assert invited is not None and (invited.email, invited.role, invited.status) == (
        "ana@example.com",
        "developer",
        "INVITED",
    )
    listed = await client.get("/dashboard/users")
    assert EMAILS.findall(listed.text) == ["ana@example.com", person_of(sandbox).email]
    assert token not in listed.text  # shown once: never again


@pytest.mark.parametrize(
    ("who", "email", "role", "status", "said"),
    [
        ("owner", "ana@example.com", "viewer", 409, "ana@example.com is already a user of this application"),
        ("owner", "not an email", "viewer", 400, "email: must be an email address"),
        ("owner", "bob@example.com", "boss", 400, "role: must be one of owner, admin"),
        ("admin", "bob@example.com", "owner", 403, "Only an owner may make someone owner"),
    ],
)
async def test_a_refused_invite_says_why_on_the_page_and_adds_no_one(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    who: str,
    email: str,
    role: str,
    status: int,
    said: str,
) -> None:
    await _active(runtime, sandbox, "ana@example.com", "viewer")
    csrf = await sign_in_as_role(client, sandbox, who)
    before = await _users(runtime, sandbox)
    refused = await _invite(client, csrf, email, role)
    assert refused.status_code == status, refused.text
    assert said in refused.text and 'role="alert"' in refused.text
    assert f'value="{email}"' in refused.text  # what was typed stays in the form
    assert await _users(runtime, sandbox) == before


async def test_change_role_disable_enable_and_remove(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ana = await _active(runtime, sandbox, "ana@example.com", "developer")
    csrf = await sign_in(client, sandbox)
    steps = [
        (f"/dashboard/users/{ana.id}/role", {"role": "finance"}, "role_changed", ("finance", "ACTIVE")),
        (f"/dashboard/users/{ana.id}/disable", {}, "disabled", ("finance", "DISABLED")),
        (f"/dashboard/users/{ana.id}/enable", {}, "enabled", ("finance", "ACTIVE")),
    ]
    for url, data, notice, state in steps:
        done = await client.post(url, data={"csrf": csrf, **data})
        assert done.status_code == 303, done.text
        assert done.headers["location"] == f"/dashboard/users?notice={notice}"
        user = (await _users(runtime, sandbox))["ana@example.com"]
        assert (user.role, user.status) == state
        page = await client.get(done.headers["location"])
        assert 'role="status"' in page.text
    removed = await client.post(f"/dashboard/users/{ana.id}/remove", data={"csrf": csrf})
    assert removed.status_code == 303
    assert "ana@example.com" not in await _users(runtime, sandbox)


async def test_an_owner_is_changed_only_by_an_owner_and_the_page_says_so(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    owner = await _active(runtime, sandbox, "olga@example.com", "owner")
    csrf = await sign_in_as_role(client, sandbox, "admin")
    for action, data in (("role", {"role": "admin"}), ("disable", {}), ("remove", {})):
        refused = await client.post(f"/dashboard/users/{owner.id}/{action}", data={"csrf": csrf, **data})
        assert refused.status_code == 403, refused.text
        assert "Only an owner may" in refused.text and 'role="alert"' in refused.text
        olga = (await _users(runtime, sandbox))["olga@example.com"]
        assert (olga.role, olga.status) == ("owner", "ACTIVE")


async def test_the_last_active_owner_stays_and_the_page_says_so(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    csrf = await sign_in(client, sandbox)  # the application's only owner
    me = (await _users(runtime, sandbox))[person_of(sandbox).email]
    for action, data in (("role", {"role": "admin"}), ("disable", {}), ("remove", {})):
        refused = await client.post(f"/dashboard/users/{me.id}/{action}", data={"csrf": csrf, **data})
        assert refused.status_code == 409, refused.text
        assert "last active owner" in refused.text and 'role="alert"' in refused.text
        assert (await _users(runtime, sandbox))[me.email] == me


async def test_a_form_without_the_session_token_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ana = await _active(runtime, sandbox, "ana@example.com", "developer")
    await sign_in(client, sandbox)
    refused = await client.post(f"/dashboard/users/{ana.id}/role", data={"role": "admin"})
    assert refused.status_code == 403
    assert (await _users(runtime, sandbox))["ana@example.com"].role == "developer"


@pytest.mark.settings(max_users=40, dashboard_key_sign_in=True)
async def test_a_key_session_of_an_application_without_people_sees_the_empty_state(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await sign_in_with_key(client, sandbox)
    empty = await client.get("/dashboard/users")
    assert empty.status_code == 200, empty.text
    assert "No one yet: invite the first person below" in empty.text


async def test_the_list_pages_like_the_api(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    await sign_in(client, sandbox)
    async with runtime.phases.transaction() as conn:
        for n in range(25):
            await service.invite(
                conn, runtime.clock, _operator(sandbox), f"p{n}@example.com", "viewer", limit=40
            )
    async with runtime.phases.reading() as conn:
        every = [user.email for user in (await service.list_users(conn, _operator(sandbox), None, 100)).items]
    first = await client.get("/dashboard/users")
    assert EMAILS.findall(first.text) == every[:20]
    shown = await dashboard_walk(client, "/dashboard/users?limit=10", EMAILS, OLDER)
    assert shown == every and len(shown) == 26  # with the owner signed in
    bad = await client.get("/dashboard/users", params={"cursor": "nonsense"})
    assert bad.status_code == 400 and "cursor" in bad.text
