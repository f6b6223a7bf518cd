"""Webhook endpoint administration through HTTP: create, list, get, patch, delete, tenancy."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import select

from payorch.db.tables.webhooks import webhook_endpoints
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error, new_application

BASE = "/v1/admin/webhook-endpoints"
HEX64 = re.compile(r"^[0-9a-f]{64}$")


async def _create(client: httpx.AsyncClient, app: Sandbox, **body: object) -> httpx.Response:
    body.setdefault("url", "https://shop.example/hooks")
    return await client.post(BASE, json=body, headers=app.headers)


async def test_create_answers_201_with_wrapper_and_a_secret_shown_once(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    response = await _create(client, sandbox, events=["payment.authorized"])
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["success"] is True
    data = body["data"]
    assert data["id"].startswith("whe_")
    assert data["application_id"] == sandbox.application_id
    assert data["url"] == "https://shop.example/hooks"
    assert data["enabled"] is True
    assert data["events"] == ["payment.authorized"]
    assert HEX64.match(data["secret"])

    got = await client.get(f"{BASE}/{data['id']}", headers=sandbox.headers)
    assert got.status_code == 200
    assert "secret" not in got.json()
    assert got.json() == {k: v for k, v in data.items() if k != "secret"}
    listed = await client.get(BASE, headers=sandbox.headers)
    assert [e["id"] for e in listed.json()["items"]] == [data["id"]]
    assert "secret" not in listed.json()["items"][0]
    assert data["secret"] not in listed.text and data["secret"] not in got.text

    # Encrypted at rest: the column holds ciphertext that decrypts to the secret.
    async with runtime.database.transaction() as conn:
        stored = (
            await conn.execute(
                select(webhook_endpoints.c.secret_encrypted).where(webhook_endpoints.c.id == data["id"])
            )
        ).scalar_one()
    assert data["secret"] not in stored
    assert runtime.cipher.decrypt(stored) == data["secret"]


async def test_each_endpoint_gets_its_own_secret(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    first = (await _create(client, sandbox)).json()["data"]["secret"]
    second = (await _create(client, sandbox)).json()["data"]["secret"]
    assert first != second


async def test_absent_events_means_all(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    data = (await _create(client, sandbox)).json()["data"]
    assert data["events"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "https://shop.example/h", "events": ["payment.exploded"]}, "events"),
        ({"url": "https://shop.example/h", "events": "payment.authorized"}, "events"),
        ({"url": "https://shop.example/h", "surprise": 1}, "surprise"),
        ({"events": []}, "url"),
        ({"url": 42}, "url"),
    ],
)
async def test_bad_bodies_are_400_validation_error(
    client: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, object], field: str
) -> None:
    response = await client.post(BASE, json=body, headers=sandbox.headers)
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert error["details"]["errors"][0]["field"].startswith(field)
    listed = await client.get(BASE, headers=sandbox.headers)
    assert listed.json()["items"] == []


async def test_patch_changes_url_events_and_enabled(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    created = (await _create(client, sandbox)).json()["data"]
    url = f"{BASE}/{created['id']}"
    response = await client.patch(
        url,
        json={"url": "http://127.0.0.1:3000/h", "events": ["payment.failed"], "enabled": False},
        headers=sandbox.headers,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["url"] == "http://127.0.0.1:3000/h"
    assert body["events"] == ["payment.failed"]
    assert body["enabled"] is False
    assert "secret" not in body
    # Partial: only what is sent changes; [] means all events again.
    body = (await client.patch(url, json={"events": []}, headers=sandbox.headers)).json()
    assert body["events"] == [] and body["enabled"] is False and body["url"].endswith(":3000/h")
    bad = await client.patch(url, json={"events": ["nope"]}, headers=sandbox.headers)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "VALIDATION_ERROR"
    bad = await client.patch(url, json={"url": "http://127.0.0.1:22/h"}, headers=sandbox.headers)
    assert bad.status_code == 400
    assert bad.json()["error"]["code"] == "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"
    assert (await client.get(url, headers=sandbox.headers)).json()["url"].endswith(":3000/h")


async def test_delete_answers_204_then_404(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    created = (await _create(client, sandbox)).json()["data"]
    url = f"{BASE}/{created['id']}"
    response = await client.delete(url, headers=sandbox.headers)
    assert response.status_code == 204 and response.content == b""
    assert (await client.get(url, headers=sandbox.headers)).status_code == 404
    assert (await client.delete(url, headers=sandbox.headers)).status_code == 404


async def test_another_application_gets_404_everywhere(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    created = (await _create(client, sandbox)).json()["data"]
    other = await new_application(runtime)
    url = f"{BASE}/{created['id']}"
    for method, path, body in [
        ("GET", url, None),
        ("PATCH", url, {"enabled": False}),
        ("DELETE", url, None),
        ("GET", url + "/deliveries", None),
        ("POST", url + "/deliveries/whd_x/retry", None),
    ]:
        response = await client.request(method, path, json=body, headers=other.headers)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert (await client.get(BASE, headers=other.headers)).json()["items"] == []
    assert (await client.get(url, headers=sandbox.headers)).json()["enabled"] is True


async def test_list_pages_newest_first(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    ids = [(await _create(client, sandbox)).json()["data"]["id"] for _ in range(3)]
    page = (await client.get(BASE, params={"limit": 2}, headers=sandbox.headers)).json()
    assert [e["id"] for e in page["items"]] == ids[::-1][:2]
    assert page["next_cursor"]
    rest = await client.get(BASE, params={"limit": 2, "cursor": page["next_cursor"]}, headers=sandbox.headers)
    assert [e["id"] for e in rest.json()["items"]] == [ids[0]]
    assert rest.json()["next_cursor"] is None
    for params in ({"limit": 0}, {"limit": 101}, {"limit": "x"}, {"cursor": "%%%"}):
        response = await client.get(BASE, params=params, headers=sandbox.headers)
        assert response.status_code == 400, params
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"


async def test_requires_an_api_key(client: httpx.AsyncClient) -> None:
    response = await client.post(BASE, json={"url": "https://shop.example/h"})
    assert response.status_code == 401
