"""The dashboard's Users page over HTTP, on SQLite and PostgreSQL: the empty state, an invite
(its link shown once and working), a role change, disable and enable, removal, paging, and the
users service's refusals (a duplicate email, a bad one, an owner made by a key, an owner changed
by a key) answered on the page with their status and nothing changed."""

from __future__ import annotations

import re

import httpx
import pytest

from payorch.auth.service import Caller
from payorch.runtime import Runtime
from payorch.users import service
from payorch.users.invites import INVITE_PATH
from payorch.users.records import User
from tests.dashboard.signing import sign_in_with_key
from tests.kit import Sandbox
from tests.pages import dashboard_walk

INVITE_URL = re.compile(r'<code id="secret">([^<]+)</code>')
EMAILS = re.compile(r'<td class="row-title mono"><span>([^<( ]+)')
OLDER = re.compile(r'href="(/dashboard/users\?[^"]*cursor=[^"]+)">Older users')

# A key's session (a SANDBOX key, behind its setting): the list holds only the people a test
# makes, and the key is not an owner.
pytestmark = pytest.mark.settings(max_users=40, dashboard_key_sign_in=True)


async def _users(runtime: Runtime, app: Sandbox) -> list[User]:
    async with runtime.phases.reading() as conn:
        return (await service.list_users(conn, _operator(app), None, 100)).items


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
    csrf = await sign_in_with_key(client, sandbox)
    empty = await client.get("/dashboard/users")
    assert empty.status_code == 200, empty.text
    assert "No one yet: invite the first person below" in empty.text
    assert '<label for="invite-email">Email</label>' in empty.text
    assert '<label for="invite-role">Role</label>' in empty.text

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
    assert EMAILS.findall(listed.text) == ["ana@example.com"]
    assert token not in listed.text  # shown once: never again


@pytest.mark.parametrize(
    ("email", "role", "status", "said"),
    [
        ("ana@example.com", "viewer", 409, "ana@example.com is already a user of this application"),
        ("not an email", "viewer", 400, "email: must be an email address"),
        ("bob@example.com", "boss", 400, "role: must be one of owner, admin"),
        (
            "bob@example.com",
            "owner",
            403,
            "Only an owner, signed in to the dashboard, may make someone owner",
        ),
    ],
)
async def test_a_refused_invite_says_why_on_the_page_and_adds_no_one(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    email: str,
    role: str,
    status: int,
    said: str,
) -> None:
    await _active(runtime, sandbox, "ana@example.com", "viewer")
    csrf = await sign_in_with_key(client, sandbox)
    refused = await _invite(client, csrf, email, role)
    assert refused.status_code == status, refused.text
    assert said in refused.text and 'role="alert"' in refused.text
    assert f'value="{email}"' in refused.text  # what was typed stays in the form
    assert [user.email for user in await _users(runtime, sandbox)] == ["ana@example.com"]


async def test_change_role_disable_enable_and_remove(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ana = await _active(runtime, sandbox, "ana@example.com", "developer")
    csrf = await sign_in_with_key(client, sandbox)
    steps = [
        (f"/dashboard/users/{ana.id}/role", {"role": "finance"}, "role_changed", ("finance", "ACTIVE")),
        (f"/dashboard/users/{ana.id}/disable", {}, "disabled", ("finance", "DISABLED")),
        (f"/dashboard/users/{ana.id}/enable", {}, "enabled", ("finance", "ACTIVE")),
    ]
    for url, data, notice, state in steps:
        done = await client.post(url, data={"csrf": csrf, **data})
        assert done.status_code == 303, done.text
        assert done.headers["location"] == f"/dashboard/users?notice={notice}"
        [user] = await _users(runtime, sandbox)
        assert (user.role, user.status) == state
        page = await client.get(done.headers["location"])
        assert 'role="status"' in page.text
    removed = await client.post(f"/dashboard/users/{ana.id}/remove", data={"csrf": csrf})
    assert removed.status_code == 303
    assert await _users(runtime, sandbox) == []


async def test_an_owner_is_changed_only_by_an_owner_and_the_page_says_so(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    owner = await _active(runtime, sandbox, "olga@example.com", "owner")
    csrf = await sign_in_with_key(client, sandbox)  # a key's session: not an owner
    for action, data in (("role", {"role": "admin"}), ("disable", {}), ("remove", {})):
        refused = await client.post(f"/dashboard/users/{owner.id}/{action}", data={"csrf": csrf, **data})
        assert refused.status_code == 403, refused.text
        assert "Only an owner, signed in to the dashboard, may" in refused.text
        assert [(u.role, u.status) for u in await _users(runtime, sandbox)] == [("owner", "ACTIVE")]


async def test_a_form_without_the_session_token_changes_nothing(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    ana = await _active(runtime, sandbox, "ana@example.com", "developer")
    await sign_in_with_key(client, sandbox)
    refused = await client.post(f"/dashboard/users/{ana.id}/role", data={"role": "admin"})
    assert refused.status_code == 403
    assert [u.role for u in await _users(runtime, sandbox)] == ["developer"]


async def test_the_list_pages_like_the_api(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    async with runtime.phases.transaction() as conn:
        for n in range(25):
            await service.invite(
                conn, runtime.clock, _operator(sandbox), f"p{n}@example.com", "viewer", limit=40
            )
    every = [user.email for user in await _users(runtime, sandbox)]
    await sign_in_with_key(client, sandbox)
    first = await client.get("/dashboard/users")
    assert EMAILS.findall(first.text) == every[:20]
    shown = await dashboard_walk(client, "/dashboard/users?limit=10", EMAILS, OLDER)
    assert shown == every and len(shown) == 25
    bad = await client.get("/dashboard/users", params={"cursor": "nonsense"})
    assert bad.status_code == 400 and "cursor" in bad.text
