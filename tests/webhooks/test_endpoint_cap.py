"""PAYORCH_MAX_WEBHOOK_ENDPOINTS through HTTP, on SQLite and PostgreSQL: one more endpoint than
the cap is 409 LIMIT_EXCEEDED and creates nothing (also when creates race at the cap), through
the API and the dashboard's form; one event then queues at most the cap's deliveries."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, assert_error, new_application
from tests.webhooks.helpers import BASE, CREATED, create_endpoint, create_intent

CAP = 3


pytestmark = pytest.mark.settings(max_webhook_endpoints=CAP)


async def endpoint_ids(client: httpx.AsyncClient, app: Sandbox) -> list[str]:
    page = (await client.get(BASE, params={"limit": 100}, headers=app.headers)).json()
    return [item["id"] for item in page["items"]]


def assert_over_cap(response: httpx.Response, current: int) -> None:
    assert_error(response, 409, "LIMIT_EXCEEDED")
    error = response.json()["error"]
    assert error["details"] == {"limit": CAP, "current": current}
    assert f"at most {CAP}" in error["message"] and "Delete an endpoint" in error["message"]


async def test_one_endpoint_over_the_cap_is_refused_and_creates_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    for n in range(CAP):
        await create_endpoint(client, sandbox, f"http://127.0.0.1:8080/{n}")
    before = await endpoint_ids(client, sandbox)
    refused = await client.post(BASE, json={"url": "http://127.0.0.1:8080/x"}, headers=sandbox.headers)
    assert_over_cap(refused, CAP)
    assert await endpoint_ids(client, sandbox) == before
    # A disabled endpoint still counts; deleting one makes room.
    disabled = await client.patch(f"{BASE}/{before[0]}", json={"enabled": False}, headers=sandbox.headers)
    assert disabled.status_code == 200, disabled.text
    again = await client.post(BASE, json={"url": "http://127.0.0.1:8080/x"}, headers=sandbox.headers)
    assert_over_cap(again, CAP)
    assert (await client.delete(f"{BASE}/{before[0]}", headers=sandbox.headers)).status_code == 204
    await create_endpoint(client, sandbox, "http://127.0.0.1:8080/x")


async def test_the_cap_is_per_application(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    for n in range(CAP):
        await create_endpoint(client, sandbox, f"http://127.0.0.1:8080/{n}")
    other = await new_application(runtime)
    await create_endpoint(client, other, "http://127.0.0.1:8080/other")


async def test_concurrent_creates_at_the_cap_create_exactly_up_to_it(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    await create_endpoint(client, sandbox, "http://127.0.0.1:8080/first")
    answers = await asyncio.gather(
        *(
            client.post(BASE, json={"url": f"http://127.0.0.1:8080/{n}"}, headers=sandbox.headers)
            for n in range(8)
        )
    )
    created = [a for a in answers if a.status_code == 201]
    CREATED.extend(a.json()["data"]["id"] for a in created)
    assert len(created) == CAP - 1, [a.text for a in answers]
    for refused in (a for a in answers if a.status_code != 201):
        assert_error(refused, 409, "LIMIT_EXCEEDED")
    assert len(await endpoint_ids(client, sandbox)) == CAP


async def test_one_event_queues_at_most_the_cap_of_deliveries(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    for n in range(CAP + 2):
        await client.post(BASE, json={"url": f"http://127.0.0.1:8080/{n}"}, headers=sandbox.headers)
    CREATED.extend(await endpoint_ids(client, sandbox))
    await create_intent(client, sandbox)
    listed = await client.get("/v1/admin/webhook-deliveries", params={"limit": 100}, headers=sandbox.headers)
    assert listed.status_code == 200 and len(listed.json()["items"]) == CAP


async def test_the_dashboard_form_over_the_cap_says_what_to_do_and_creates_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    for n in range(CAP):
        await create_endpoint(client, sandbox, f"http://127.0.0.1:8080/{n}")
    csrf = await sign_in(client, sandbox)
    page = await client.get("/dashboard/webhooks")
    assert f"at most {CAP} endpoints" in page.text
    answer = await client.post("/dashboard/webhooks", data={"csrf": csrf, "url": "http://127.0.0.1:8080/x"})
    assert answer.status_code == 409, answer.text
    assert f"at most {CAP} are allowed" in answer.text and "Delete an endpoint" in answer.text
    assert len(await endpoint_ids(client, sandbox)) == CAP


@pytest.mark.parametrize("settings_overrides", [{}])
async def test_the_default_cap_is_16(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    for n in range(16):
        await create_endpoint(client, sandbox, f"http://127.0.0.1:8080/{n}")
    refused = await client.post(BASE, json={"url": "http://127.0.0.1:8080/x"}, headers=sandbox.headers)
    assert_error(refused, 409, "LIMIT_EXCEEDED")
    assert refused.json()["error"]["details"] == {"limit": 16, "current": 16}
