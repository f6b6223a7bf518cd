"""GET /v1/events: the application's events, newest first, filters and cursor."""

from __future__ import annotations

import httpx
import orjson
import pytest

from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application
from tests.webhooks.helpers import create_intent


async def test_lists_the_stored_bodies_newest_first_with_a_cursor(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    intents = [await create_intent(client, sandbox, f"order-{n}") for n in range(3)]
    first = await client.get("/v1/events", params={"limit": 2}, headers=sandbox.headers)
    assert first.status_code == 200, first.text
    page = first.json()
    assert [e["data"]["payment_intent_id"] for e in page["items"]] == intents[::-1][:2]
    for item in page["items"]:
        assert set(item) == {"id", "type", "created_at", "data"}
        assert item["id"].startswith("evt_") and item["type"] == "payment_intent.created"
    rest = await client.get(
        "/v1/events", params={"limit": 2, "cursor": page["next_cursor"]}, headers=sandbox.headers
    )
    assert [e["data"]["payment_intent_id"] for e in rest.json()["items"]] == [intents[0]]
    assert rest.json()["next_cursor"] is None
    everything = (await client.get("/v1/events", headers=sandbox.headers)).json()
    assert len(everything["items"]) == 3 and everything["next_cursor"] is None


async def test_filters_by_type_and_payment_intent(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    first = await create_intent(client, sandbox, "a")
    await create_intent(client, sandbox, "b")
    by_intent = await client.get("/v1/events", params={"payment_intent_id": first}, headers=sandbox.headers)
    [event] = by_intent.json()["items"]
    assert event["data"]["payment_intent_id"] == first
    by_type = await client.get(
        "/v1/events", params={"type": "payment_intent.created"}, headers=sandbox.headers
    )
    assert len(by_type.json()["items"]) == 2
    none = await client.get("/v1/events", params={"type": "payment.authorized"}, headers=sandbox.headers)
    assert none.json() == {"items": [], "next_cursor": None}
    # The body listed is byte for byte the stored one (what deliveries sign).
    assert orjson.dumps(event) in by_intent.content


async def test_only_the_callers_events(client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime) -> None:
    intent = await create_intent(client, sandbox)
    other = await new_application(runtime)
    response = await client.get("/v1/events", params={"payment_intent_id": intent}, headers=other.headers)
    assert response.json()["items"] == []
    assert (await client.get("/v1/events", headers=other.headers)).json()["items"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 101},
        {"limit": "many"},
        {"type": "payment.exploded"},
        {"cursor": "!!"},
        {"cursor": "YWJj"},  # valid base64, not a position of this list
    ],
)
async def test_bad_query_values_are_400(
    client: httpx.AsyncClient, sandbox: Sandbox, params: dict[str, object]
) -> None:
    response = await client.get("/v1/events", params=params, headers=sandbox.headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


async def test_requires_an_api_key(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/events")).status_code == 401
