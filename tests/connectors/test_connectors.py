"""Connectors administration through HTTP: create, list, patch, credentials, environments."""

from __future__ import annotations

import asyncio

import httpx
from sqlalchemy import select

from payorch.db.tables.providers import connectors
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error, new_application

A = "provider_a_redirect_post"
B = "provider_b_redirect_get"
A_CREDENTIALS = {"commerce_code": "597055555532", "api_key": "secret-api-key-value"}
B_CREDENTIALS = {"access_token": "TEST-123-abc", "webhook_secret": "whsec-value"}


def path(merchant_id: str) -> str:
    return f"/v1/admin/merchant-accounts/{merchant_id}/connectors"


async def test_create_list_and_patch(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> None:
    body = {"provider": A, "mode": "SANDBOX", "priority": 5, "credentials": A_CREDENTIALS}
    response = await client.post(path(sandbox.merchant_account_id), json=body, headers=sandbox.headers)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["id"].startswith("cfg_")
    assert created["provider"] == A and created["mode"] == "SANDBOX" and created["priority"] == 5
    assert created["enabled"] is True and created["has_credentials"] is True
    assert "credentials" not in created and "secret-api-key-value" not in response.text

    mock = {"provider": B, "mode": "MOCK", "priority": 1}
    response = await client.post(path(sandbox.merchant_account_id), json=mock, headers=sandbox.headers)
    assert response.status_code == 201, response.text
    assert response.json()["has_credentials"] is False

    listed = await client.get(path(sandbox.merchant_account_id), headers=sandbox.headers)
    assert listed.status_code == 200
    items = listed.json()["items"]
    assert [item["provider"] for item in items] == [mock["provider"], created["provider"]]  # by priority
    assert "secret-api-key-value" not in listed.text

    patched = await client.patch(
        f"{path(sandbox.merchant_account_id)}/{created['id']}",
        json={"priority": 0, "enabled": False},
        headers=sandbox.headers,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["priority"] == 0 and patched.json()["enabled"] is False
    assert patched.json()["has_credentials"] is True

    # Encrypted at rest: the stored column is a Fernet token, not the secret.
    async with runtime.database.transaction() as conn:
        stored = (
            await conn.execute(select(connectors.c.credentials).where(connectors.c.id == created["id"]))
        ).scalar_one()
    assert "secret-api-key-value" not in stored
    assert "secret-api-key-value" in runtime.cipher.decrypt(stored)


async def test_duplicate_provider_is_409(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    body = {"provider": A, "mode": "MOCK"}
    first = await client.post(path(sandbox.merchant_account_id), json=body, headers=sandbox.headers)
    assert first.status_code == 201
    second = await client.post(path(sandbox.merchant_account_id), json=body, headers=sandbox.headers)
    assert second.status_code == 409
    assert second.json()["error"]["code"] == "CONNECTOR_CONFIG_ALREADY_EXISTS"


async def test_concurrent_creates_make_one(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    body = {"provider": B, "mode": "MOCK"}
    responses = await asyncio.gather(
        *(
            client.post(path(sandbox.merchant_account_id), json=body, headers=sandbox.headers)
            for _ in range(4)
        )
    )
    codes = sorted(r.status_code for r in responses)
    assert codes == [201, 409, 409, 409], [r.text for r in responses]
    listed = await client.get(path(sandbox.merchant_account_id), headers=sandbox.headers)
    assert len(listed.json()["items"]) == 1


async def test_credentials_are_validated_per_provider(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    url = path(sandbox.merchant_account_id)
    cases = [
        ({"provider": A, "mode": "SANDBOX"}, "credentials"),
        (
            {"provider": A, "mode": "SANDBOX", "credentials": {"commerce_code": "1"}},
            "credentials.api_key",
        ),
        (
            {"provider": A, "mode": "SANDBOX", "credentials": B_CREDENTIALS},
            "credentials.access_token",
        ),
        (
            {"provider": B, "mode": "SANDBOX", "credentials": {**B_CREDENTIALS, "x": "y"}},
            "credentials.x",
        ),
        (
            {
                "provider": B,
                "mode": "SANDBOX",
                "credentials": {**B_CREDENTIALS, "access_token": ""},
            },
            None,
        ),
        ({"provider": "paypal", "mode": "MOCK"}, "provider"),
        ({"provider": A, "mode": "LIVE"}, "mode"),
        ({"provider": A, "mode": "MOCK", "priority": -1}, "priority"),
        ({"provider": A, "mode": "MOCK", "priority": "1"}, "priority"),
        ({"provider": A, "mode": "MOCK", "surprise": 1}, "surprise"),
    ]
    for body, field in cases:
        response = await client.post(url, json=body, headers=sandbox.headers)
        error = assert_error(response, 400, "VALIDATION_ERROR")
        if field is not None:
            assert error["details"]["errors"][0]["field"] == field, (body, error)
    assert (await client.get(url, headers=sandbox.headers)).json()["items"] == []


async def test_modes_follow_the_application_environment(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    response = await client.post(
        path(sandbox.merchant_account_id),
        json={"provider": A, "mode": "PRODUCTION", "credentials": A_CREDENTIALS},
        headers=sandbox.headers,
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"

    production = await new_application(runtime, "PRODUCTION")
    url = path(production.merchant_account_id)
    response = await client.post(url, json={"provider": A, "mode": "MOCK"}, headers=production.headers)
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"
    response = await client.post(
        url,
        json={"provider": A, "mode": "PRODUCTION", "credentials": A_CREDENTIALS},
        headers=production.headers,
    )
    assert response.status_code == 201, response.text
    # Nor may PATCH switch it to MOCK.
    patched = await client.patch(
        f"{url}/{response.json()['id']}", json={"mode": "MOCK"}, headers=production.headers
    )
    assert patched.status_code == 403


async def test_patch_rules(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    url = path(sandbox.merchant_account_id)
    created = (await client.post(url, json={"provider": B, "mode": "MOCK"}, headers=sandbox.headers)).json()
    item = f"{url}/{created['id']}"
    # SANDBOX needs credentials: none stored, none sent.
    response = await client.patch(item, json={"mode": "SANDBOX"}, headers=sandbox.headers)
    assert response.status_code == 400
    response = await client.patch(
        item, json={"mode": "SANDBOX", "credentials": B_CREDENTIALS}, headers=sandbox.headers
    )
    assert response.status_code == 200 and response.json()["has_credentials"] is True
    assert response.json()["mode"] == "SANDBOX"
    for bad in ({"provider": A}, {"enabled": None}, {"priority": 1.5}):
        response = await client.patch(item, json=bad, headers=sandbox.headers)
        assert response.status_code == 400, (bad, response.text)
    response = await client.patch(f"{url}/cfg_unknown", json={"priority": 1}, headers=sandbox.headers)
    assert response.status_code == 404


async def test_another_application_gets_404(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    url = path(sandbox.merchant_account_id)
    created = (await client.post(url, json={"provider": A, "mode": "MOCK"}, headers=sandbox.headers)).json()
    other = await new_application(runtime)
    assert (await client.get(url, headers=other.headers)).status_code == 404
    response = await client.post(url, json={"provider": B, "mode": "MOCK"}, headers=other.headers)
    assert response.status_code == 404
    response = await client.patch(f"{url}/{created['id']}", json={"priority": 9}, headers=other.headers)
    assert response.status_code == 404
    # Nor through its own merchant id.
    response = await client.patch(
        f"{path(other.merchant_account_id)}/{created['id']}",
        json={"priority": 9},
        headers=other.headers,
    )
    assert response.status_code == 404
    assert (await client.get(url)).status_code == 401
