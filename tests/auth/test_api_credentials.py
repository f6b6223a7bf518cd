"""API credentials administration through HTTP: create (shown once), list, revoke."""

from __future__ import annotations

import time
import types

import httpx
import pytest

from payorch.app import create_app
from payorch.auth import service as auth_service
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.db import Database
from payorch.runtime import Runtime
from tests.kit import Sandbox, make_settings, new_application

URL = "/v1/admin/api-credentials"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_create_list_and_use_a_key(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    response = await client.post(URL, json={"name": "backend"}, headers=sandbox.headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert set(created) == {
        "id", "name", "prefix", "environment", "api_key", "created_at",
        "scopes", "expires_at", "last_used_at",
    }  # fmt: skip
    assert (created["scopes"], created["expires_at"], created["last_used_at"]) == (None, None, None)
    assert created["id"].startswith("key_") and created["name"] == "backend"
    assert created["environment"] == "SANDBOX"
    assert created["api_key"].startswith(f"pay_sb_{created['prefix']}_")
    # The new key works.
    assert (await client.get("/v1/payments", headers=bearer(created["api_key"]))).status_code == 200
    # Without a body: no name.
    unnamed = await client.post(URL, headers=sandbox.headers)
    assert unnamed.status_code == 201 and unnamed.json()["name"] is None

    listed = await client.get(URL, headers=sandbox.headers)
    assert listed.status_code == 200
    items = listed.json()["items"]
    assert len(items) == 3
    assert all("api_key" not in item and "secret_hash" not in item for item in items)
    assert created["api_key"] not in listed.text
    by_id = {item["id"]: item for item in items}
    assert by_id[created["id"]]["prefix"] == created["prefix"]
    assert by_id[created["id"]]["revoked_at"] is None


async def test_bad_body_is_400(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    for body in ({"name": ""}, {"name": 5}, {"scopes": []}):
        response = await client.post(URL, json=body, headers=sandbox.headers)
        assert response.status_code == 400, response.text


async def test_revoked_key_is_refused_at_once(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    second = (await client.post(URL, json={"name": "old"}, headers=sandbox.headers)).json()
    assert (await client.get("/v1/payments", headers=bearer(second["api_key"]))).status_code == 200

    # A key may revoke itself while another stays active.
    response = await client.delete(f"{URL}/{second['id']}", headers=bearer(second["api_key"]))
    assert response.status_code == 204 and response.content == b""
    refused = await client.get("/v1/payments", headers=bearer(second["api_key"]))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "AUTHENTICATION_FAILED"
    assert refused.headers["WWW-Authenticate"] == "Bearer"
    # Listed as revoked; revoking again changes nothing.
    items = {i["id"]: i for i in (await client.get(URL, headers=sandbox.headers)).json()["items"]}
    assert items[second["id"]]["revoked_at"] is not None
    again = await client.delete(f"{URL}/{second['id']}", headers=sandbox.headers)
    assert again.status_code == 204


async def test_last_active_key_cannot_be_revoked(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    first_id = (await client.get(URL, headers=sandbox.headers)).json()["items"][0]["id"]
    response = await client.delete(f"{URL}/{first_id}", headers=sandbox.headers)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "INVALID_STATE"
    assert (await client.get("/v1/payments", headers=sandbox.headers)).status_code == 200


async def test_other_applications_keys_are_404(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    other = await new_application(runtime)
    theirs = (await client.post(URL, json={}, headers=other.headers)).json()
    for credential_id in (theirs["id"], "key_unknown"):
        response = await client.delete(f"{URL}/{credential_id}", headers=sandbox.headers)
        assert response.status_code == 404
    assert (await client.get("/v1/payments", headers=bearer(theirs["api_key"]))).status_code == 200
    listed = (await client.get(URL, headers=sandbox.headers)).json()["items"]
    assert theirs["id"] not in {i["id"] for i in listed}
    assert (await client.get(URL)).status_code == 401


async def test_another_process_refuses_the_key_within_the_cache_ttl(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    database_url: str,
    database: Database,
    clock: FrozenClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second replica (its own authenticator cache) still knows the key as valid until its
    cache entry expires (5 s), then refuses it."""
    replica = build_runtime(make_settings(database_url), clock=clock, database=database)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(runtime=replica)), base_url="http://testserver"
    ) as other:
        doomed = (await client.post(URL, json={}, headers=sandbox.headers)).json()
        assert (await other.get("/v1/payments", headers=bearer(doomed["api_key"]))).status_code == 200
        assert (await client.delete(f"{URL}/{doomed['id']}", headers=sandbox.headers)).status_code == 204
        assert (await client.get("/v1/payments", headers=bearer(doomed["api_key"]))).status_code == 401

        later = time.monotonic() + auth_service.CACHE_SECONDS + 0.1
        monkeypatch.setattr(auth_service, "time", types.SimpleNamespace(monotonic=lambda: later))
        assert (await other.get("/v1/payments", headers=bearer(doomed["api_key"]))).status_code == 401
    await replica.close()


async def test_concurrent_revocations_keep_one_active_key(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    """Two requests revoking the application's last two active keys at once: one wins, the
    other is refused, so the application is never left without a key."""
    import asyncio

    second = (await client.post(URL, json={}, headers=sandbox.headers)).json()
    first_id = next(
        item["id"]
        for item in (await client.get(URL, headers=sandbox.headers)).json()["items"]
        if item["id"] != second["id"]
    )
    answers = await asyncio.gather(
        client.delete(f"{URL}/{first_id}", headers=sandbox.headers),
        client.delete(f"{URL}/{second['id']}", headers=bearer(second["api_key"])),
    )
    assert sorted(a.status_code for a in answers) == [204, 409], [a.text for a in answers]
    # Whichever key survived still works, and it is the only active one.
    survivor = bearer(second["api_key"]) if answers[0].status_code == 204 else sandbox.headers
    items = (await client.get(URL, headers=survivor)).json()["items"]
    assert sum(1 for item in items if item["revoked_at"] is None) == 1
