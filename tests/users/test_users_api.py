"""/v1/admin/users through HTTP on SQLite and PostgreSQL: an invite answers 201 with the invite
URL once (its token, accepted, sets the password; never a hash in any answer); the list is paged
like the others; bad input is 400 naming the field and creates nothing; a second invite of an
email is 409 INVALID_STATE; PAYORCH_MAX_USERS caps the users (409 LIMIT_EXCEEDED); PATCH changes
the role or disables/enables; DELETE removes; a new invite link replaces an old one; an API key
never touches owners (403 FORBIDDEN)."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from payorch.auth.service import OPERATOR, Caller
from payorch.db.tables.activity import activity_log
from payorch.runtime import Runtime
from payorch.users import service
from tests.kit import Sandbox, assert_error

URL = "/v1/admin/users"
PREFIX = "http://testserver/dashboard/invite/"
PASSWORD = "correct horse battery"
HIDDEN = ("password_hash", "invite_hash", "totp_secret", "$argon2")

pytestmark = pytest.mark.settings(max_users=4)


async def invite(client: httpx.AsyncClient, app: Sandbox, email: str, role: str) -> dict[str, object]:
    response = await client.post(URL, json={"email": email, "role": role}, headers=app.headers)
    assert response.status_code == 201, response.text
    body: dict[str, object] = response.json()
    return body


async def accept(runtime: Runtime, invite_url: object) -> None:
    assert isinstance(invite_url, str) and invite_url.startswith(PREFIX)
    async with runtime.database.transaction() as conn:
        await service.accept_invite(conn, runtime.clock, invite_url.removeprefix(PREFIX), PASSWORD)


async def listed(client: httpx.AsyncClient, app: Sandbox) -> list[dict[str, object]]:
    response = await client.get(URL, params={"limit": 100}, headers=app.headers)
    assert response.status_code == 200, response.text
    items: list[dict[str, object]] = response.json()["items"]
    return items


async def test_invite_list_read_change_and_remove(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    response = await client.post(
        URL, json={"email": "Ana@Example.com", "role": "developer"}, headers=sandbox.headers
    )
    assert response.status_code == 201, response.text
    created = response.json()
    async with runtime.database.reading() as conn:  # its entry, with the request's origin
        entry = (
            (await conn.execute(select(activity_log).where(activity_log.c.resource_id == created["id"])))
            .mappings()
            .one()
        )
    assert (entry["action"], entry["actor_type"], entry["request_id"]) == (
        "user.invited",
        "api_key",
        response.headers["x-request-id"],
    )
    assert entry["changes"] == {"email": "ana@example.com", "role": "developer"}
    assert set(created) == {
        "id", "email", "role", "status", "invite_url", "created_at", "updated_at",
        "last_signed_in_at", "invite_expires_at",
    }  # fmt: skip
    assert (created["email"], created["role"], created["status"]) == (
        "ana@example.com",
        "developer",
        "INVITED",
    )
    assert str(created["id"]).startswith("usr_")
    user_url = f"{URL}/{created['id']}"
    read = (await client.get(user_url, headers=sandbox.headers)).json()
    assert "invite_url" not in read and read["status"] == "INVITED"

    await accept(runtime, created["invite_url"])
    changed = await client.patch(user_url, json={"role": "operator"}, headers=sandbox.headers)
    assert changed.status_code == 200, changed.text
    assert (changed.json()["role"], changed.json()["status"]) == ("operator", "ACTIVE")
    disabled = await client.patch(user_url, json={"disabled": True}, headers=sandbox.headers)
    assert disabled.json()["status"] == "DISABLED"
    enabled = await client.patch(
        user_url, json={"disabled": False, "role": "viewer"}, headers=sandbox.headers
    )
    assert (enabled.json()["role"], enabled.json()["status"]) == ("viewer", "ACTIVE")

    second = await invite(client, sandbox, "bo@example.com", "finance")
    everyone = await listed(client, sandbox)
    assert [u["id"] for u in everyone] == [second["id"], created["id"]]  # newest first
    page = (await client.get(URL, params={"limit": 1}, headers=sandbox.headers)).json()
    assert [u["id"] for u in page["items"]] == [second["id"]]
    after = await client.get(URL, params={"limit": 1, "cursor": page["next_cursor"]}, headers=sandbox.headers)
    assert [u["id"] for u in after.json()["items"]] == [created["id"]]
    assert after.json()["next_cursor"] is None
    for answer in (str(everyone), read, changed.text, enabled.text):
        assert not any(word in str(answer) for word in HIDDEN)

    assert (await client.delete(user_url, headers=sandbox.headers)).status_code == 204
    assert_error(await client.get(user_url, headers=sandbox.headers), 404, "RESOURCE_NOT_FOUND")
    assert_error(await client.delete(user_url, headers=sandbox.headers), 404, "RESOURCE_NOT_FOUND")
    assert [u["id"] for u in await listed(client, sandbox)] == [second["id"]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not-an-email", "role": "viewer"}, "email"),
        ({"email": "a@b", "role": "viewer"}, "email"),
        ({"email": "ana @example.com", "role": "viewer"}, "email"),
        ({"email": " ana@example.com", "role": "viewer"}, "email"),
        ({"email": "ana@example..com", "role": "viewer"}, "email"),
        ({"email": "a" * 250 + "@x.com", "role": "viewer"}, "email"),
        ({"email": "ana@example.com", "role": "superuser"}, "role"),
        ({"email": "ana@example.com"}, "role"),
        ({"email": "ana@example.com", "role": "viewer", "password": "x"}, "password"),
        ({"email": 5, "role": "viewer"}, "email"),
    ],
)
async def test_bad_input_is_refused_naming_the_field_and_creates_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, object], field: str
) -> None:
    error = assert_error(await client.post(URL, json=body, headers=sandbox.headers), 400, "VALIDATION_ERROR")
    assert [e["field"] for e in error["details"]["errors"]] == [field]
    assert await listed(client, sandbox) == []


async def test_patch_refuses_bad_input_and_changes_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    created = await invite(client, sandbox, "ana@example.com", "viewer")
    user_url = f"{URL}/{created['id']}"
    nothing = await client.patch(user_url, json={}, headers=sandbox.headers)  # asks for no change
    assert (nothing.status_code, nothing.json()["role"]) == (200, "viewer")
    for body, field in (({"role": "root"}, "role"), ({"disabled": "yes"}, "disabled")):
        error = assert_error(
            await client.patch(user_url, json=body, headers=sandbox.headers), 400, "VALIDATION_ERROR"
        )
        assert [e["field"] for e in error["details"]["errors"]] == [field]
    # An invited user is removed, not disabled.
    error = assert_error(
        await client.patch(user_url, json={"disabled": True}, headers=sandbox.headers), 409, "INVALID_STATE"
    )
    assert "remove them" in error["message"]
    assert_error(
        await client.patch(f"{URL}/usr_unknown", json={"role": "viewer"}, headers=sandbox.headers),
        404,
        "RESOURCE_NOT_FOUND",
    )
    assert [(u["role"], u["status"]) for u in await listed(client, sandbox)] == [("viewer", "INVITED")]


async def test_one_email_once_per_application_and_at_most_max_users(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await invite(client, sandbox, "ana@example.com", "viewer")
    again = await client.post(
        URL, json={"email": "ANA@example.com", "role": "admin"}, headers=sandbox.headers
    )
    assert "already a user" in assert_error(again, 409, "INVALID_STATE")["message"]
    for n in range(3):
        await invite(client, sandbox, f"user{n}@example.com", "viewer")
    over = await client.post(
        URL, json={"email": "five@example.com", "role": "viewer"}, headers=sandbox.headers
    )
    error = assert_error(over, 409, "LIMIT_EXCEEDED")
    assert error["details"] == {"limit": 4, "current": 4}
    assert len(await listed(client, sandbox)) == 4


async def test_a_new_invite_link_replaces_the_old_one_until_accepted(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    created = await invite(client, sandbox, "ana@example.com", "viewer")
    renewed = await client.post(f"{URL}/{created['id']}/invite", headers=sandbox.headers)
    assert renewed.status_code == 200, renewed.text
    new_url = renewed.json()["invite_url"]
    assert new_url != created["invite_url"] and new_url.startswith(PREFIX)
    async with runtime.database.reading() as conn:
        old_token = str(created["invite_url"]).removeprefix(PREFIX)
        assert await service.find_invite(conn, runtime.clock, old_token) is None
    await accept(runtime, new_url)
    error = assert_error(
        await client.post(f"{URL}/{created['id']}/invite", headers=sandbox.headers), 409, "INVALID_STATE"
    )
    assert error["details"]["status"] == "ACTIVE"


async def test_an_api_key_never_touches_owners(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    refused = await client.post(
        URL, json={"email": "boss@example.com", "role": "owner"}, headers=sandbox.headers
    )
    assert "Only an owner" in assert_error(refused, 403, "FORBIDDEN")["message"]
    assert await listed(client, sandbox) == []
    async with runtime.database.transaction() as conn:  # the operator's command line may
        caller = service_caller(sandbox)
        owner, _ = await service.invite(conn, runtime.clock, caller, "boss@example.com", "owner", limit=4)
    owner_url = f"{URL}/{owner.id}"
    assert_error(
        await client.patch(owner_url, json={"role": "admin"}, headers=sandbox.headers), 403, "FORBIDDEN"
    )
    assert_error(await client.delete(owner_url, headers=sandbox.headers), 403, "FORBIDDEN")
    assert_error(await client.post(owner_url + "/invite", headers=sandbox.headers), 403, "FORBIDDEN")
    assert [(u["role"], u["status"]) for u in await listed(client, sandbox)] == [("owner", "INVITED")]


def service_caller(app: Sandbox) -> Caller:
    return Caller(app.application_id, "SANDBOX", OPERATOR)
