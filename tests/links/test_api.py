"""Payment links through the API, on SQLite and PostgreSQL: create (Idempotency-Key), read,
list by status with pages, deactivate with a message for buyers, the cap of ACTIVE links per
application, another application's link (404), bad input in the API's error shape, the scopes,
and the activity log's entries."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from payorch.clock import FrozenClock, isoformat
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error, new_application
from tests.links.helpers import LINKS, activity, create_link, link_body

pytestmark = pytest.mark.settings(max_active_payment_links=3, public_url="https://pay.example")


async def test_create_read_and_replay(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock
) -> None:
    expiry = clock.now() + timedelta(days=2)
    body = link_body(
        sandbox,
        external_reference="ig-42",
        expires_at=isoformat(expiry),
        max_payments=3,
        after_payment_url="https://shop.example/thanks",
        metadata={"channel": "whatsapp"},
    )
    headers = {**sandbox.headers, "Idempotency-Key": "link-1"}
    first = await client.post(LINKS, json=body, headers=headers)
    assert first.status_code == 201, first.text
    link = first.json()
    assert link["id"].startswith("plink_")
    assert link["url"] == f"https://pay.example/pay/{link['id']}"
    assert link["status"] == "ACTIVE"
    assert (link["payments_count"], link["amount_collected"]) == (0, 0)
    assert link["expires_at"] == isoformat(expiry)
    assert link["max_payments"] == 3 and link["metadata"] == {"channel": "whatsapp"}

    again = await client.post(LINKS, json=body, headers=headers)
    assert again.status_code == 201 and again.json() == link
    assert again.headers["idempotent-replayed"] == "true"
    other = await client.post(LINKS, json={**body, "amount": 1}, headers=headers)
    assert_error(other, 409, "IDEMPOTENCY_CONFLICT")

    read = await client.get(f"{LINKS}/{link['id']}", headers=sandbox.headers)
    assert read.status_code == 200 and read.json() == link

    [entry] = await activity(client, sandbox, "payment_link.created")
    assert entry["resource"] == {"type": "payment_link", "id": link["id"]}
    assert entry["changes"]["amount"] == 15000 and entry["changes"]["max_payments"] == 3


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"amount": 0}, "amount"),
        ({"amount": "15000"}, "amount"),
        ({"currency": "clp"}, "currency"),
        ({"description": ""}, "description"),
        ({"max_payments": 0}, "max_payments"),
        ({"after_payment_url": "javascript:alert(1)"}, "after_payment_url"),
        ({"expires_at": "tomorrow"}, "expires_at"),
        ({"expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
        ({"provider": "auto"}, "provider"),
    ],
)
async def test_bad_input_is_refused_in_the_error_shape(
    client: httpx.AsyncClient, sandbox: Sandbox, overrides: dict[str, object], field: str
) -> None:
    answer = await client.post(LINKS, json=link_body(sandbox, **overrides), headers=sandbox.headers)
    error = assert_error(answer, 400, "VALIDATION_ERROR")
    assert field in {problem["field"].split(".")[0] for problem in error["details"]["errors"]}
    assert (await client.get(LINKS, headers=sandbox.headers)).json()["items"] == []


async def test_another_applications_link_is_not_found(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    link = await create_link(client, sandbox)
    other = await new_application(runtime)
    path = f"{LINKS}/{link['id']}"
    assert_error(await client.get(path, headers=other.headers), 404, "RESOURCE_NOT_FOUND")
    assert_error(await client.post(f"{path}/deactivate", headers=other.headers), 404, "RESOURCE_NOT_FOUND")
    assert (await client.get(LINKS, headers=other.headers)).json()["items"] == []
    foreign = link_body(sandbox)  # the other application may not use this merchant either
    assert_error(await client.post(LINKS, json=foreign, headers=other.headers), 404, "RESOURCE_NOT_FOUND")


async def test_deactivate_with_a_message_and_the_list_by_status(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    first = await create_link(client, sandbox, description="first")
    second = await create_link(client, sandbox, description="second")
    path = f"{LINKS}/{first['id']}/deactivate"
    too_long = await client.post(path, json={"message": "x" * 501}, headers=sandbox.headers)
    assert_error(too_long, 400, "VALIDATION_ERROR")
    answer = await client.post(path, json={"message": "Sold out, sorry"}, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "DEACTIVATED" and answer.json()["buyer_message"] == "Sold out, sorry"
    again = await client.post(path, headers=sandbox.headers)  # already done: answered as it is
    assert again.status_code == 200 and again.json()["buyer_message"] == "Sold out, sorry"

    active = await client.get(LINKS, params={"status": "ACTIVE"}, headers=sandbox.headers)
    assert [item["id"] for item in active.json()["items"]] == [second["id"]]
    off = await client.get(LINKS, params={"status": "DEACTIVATED"}, headers=sandbox.headers)
    assert [item["id"] for item in off.json()["items"]] == [first["id"]]
    page = await client.get(LINKS, params={"limit": 1}, headers=sandbox.headers)
    assert [item["id"] for item in page.json()["items"]] == [second["id"]]
    rest = await client.get(
        LINKS, params={"limit": 1, "cursor": page.json()["next_cursor"]}, headers=sandbox.headers
    )
    assert [item["id"] for item in rest.json()["items"]] == [first["id"]]
    assert rest.json()["next_cursor"] is None
    assert_error(
        await client.get(LINKS, params={"status": "OPEN"}, headers=sandbox.headers), 400, "VALIDATION_ERROR"
    )

    [entry] = await activity(client, sandbox, "payment_link.deactivated")
    assert entry["resource"]["id"] == first["id"]
    assert entry["changes"] == {"status": ["ACTIVE", "DEACTIVATED"], "message": True}


async def test_the_cap_counts_active_links_only(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    links = [await create_link(client, sandbox) for _ in range(3)]
    error = assert_error(
        await client.post(LINKS, json=link_body(sandbox), headers=sandbox.headers), 409, "LIMIT_EXCEEDED"
    )
    assert error["details"]["limit"] == 3
    await client.post(f"{LINKS}/{links[0]['id']}/deactivate", headers=sandbox.headers)
    await create_link(client, sandbox)


async def test_expiry_by_the_clock_on_read(
    client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock
) -> None:
    link = await create_link(client, sandbox, expires_at=isoformat(clock.now() + timedelta(hours=1)))
    clock.advance(3599)
    assert (await client.get(f"{LINKS}/{link['id']}", headers=sandbox.headers)).json()["status"] == "ACTIVE"
    clock.advance(1)
    listed = await client.get(LINKS, params={"status": "EXPIRED"}, headers=sandbox.headers)
    assert [item["status"] for item in listed.json()["items"]] == ["EXPIRED"]
    read = await client.get(f"{LINKS}/{link['id']}", headers=sandbox.headers)
    assert read.json()["status"] == "EXPIRED"
    events = (await client.get("/v1/events", headers=sandbox.headers)).json()["items"]
    expired = [event for event in events if event["type"] == "payment_link.expired"]
    assert len(expired) == 1 and expired[0]["data"]["payment_link_id"] == link["id"]
    refused = await client.post(f"{LINKS}/{link['id']}/deactivate", headers=sandbox.headers)
    assert_error(refused, 409, "INVALID_STATE")


async def test_scopes(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    keys = "/v1/admin/api-credentials"
    reader = (
        await client.post(keys, json={"scopes": ["payment_links:read"]}, headers=sandbox.headers)
    ).json()
    headers = {"Authorization": f"Bearer {reader['api_key']}"}
    assert (await client.get(LINKS, headers=headers)).status_code == 200
    error = assert_error(await client.post(LINKS, json=link_body(sandbox), headers=headers), 403, "FORBIDDEN")
    assert error["details"]["required_scope"] == "payment_links:write"
