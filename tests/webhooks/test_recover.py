"""Recover through HTTP: an endpoint's EXHAUSTED (and, on request, still-failing) deliveries
since a time get a new schedule in one call; idempotent; scoped to the application."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from payorch.clock import FrozenClock, isoformat
from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.kit import Sandbox, assert_error, new_application
from tests.webhooks.helpers import BASE, Hooks, create_endpoint, create_intent, deliveries_of
from tests.webhooks.receiver import Receiver

SCHEDULE = [1, 1, 1, 1, 1, 1]


pytestmark = pytest.mark.settings(
    webhook_retry_schedule=",".join(map(str, SCHEDULE)), webhook_timeout_seconds=5.0
)


async def _exhaust(runtime: Runtime, clock: FrozenClock, deliveries: WebhookDeliveries) -> None:
    for _ in range(7):
        await deliveries.run_until_idle(runtime)
        clock.advance(max(SCHEDULE))


async def test_recover_restarts_exhausted_deliveries_since_a_time_once(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await hooks.queued("/status/500", "old")
    clock.advance(60)
    since = clock.now()
    await create_intent(client, sandbox, "new-1")
    await create_intent(client, sandbox, "new-2")
    await _exhaust(runtime, clock, deliveries)
    listed = await deliveries_of(client, sandbox, endpoint_id)
    assert [d["status"] for d in listed] == ["EXHAUSTED"] * 3

    # The receiver is fixed; recover restarts only the two created since `since`.
    await client.patch(f"{BASE}/{endpoint_id}", json={"url": receiver.url("/ok")}, headers=sandbox.headers)
    url = f"{BASE}/{endpoint_id}/recover"
    response = await client.post(url, json={"since": isoformat(since)}, headers=sandbox.headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"recovered": 2}
    # Idempotent: the same call again (before or after the attempts) restarts nothing more.
    again = await client.post(url, json={"since": isoformat(since)}, headers=sandbox.headers)
    assert again.json() == {"recovered": 0}
    assert await deliveries.run_until_idle(runtime) == 2
    assert len(receiver.at("/ok")) == 2
    statuses = sorted(d["status"] for d in await deliveries_of(client, sandbox, endpoint_id))
    assert statuses == ["EXHAUSTED", "SUCCEEDED", "SUCCEEDED"]
    again = await client.post(url, json={"since": isoformat(since)}, headers=sandbox.headers)
    assert again.json() == {"recovered": 0}
    assert await deliveries.run_until_idle(runtime) == 0

    # A date is midnight UTC: since yesterday's midnight takes the old one too.
    day = (since - timedelta(days=1)).date().isoformat()
    response = await client.post(url, json={"since": day}, headers=sandbox.headers)
    assert response.json() == {"recovered": 1}


async def test_recover_includes_still_failing_deliveries_only_on_request(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url("/status/503"))
    since = clock.now() - timedelta(seconds=1)
    await create_intent(client, sandbox)
    assert await deliveries.run_until_idle(runtime) == 1  # one failed attempt, retry in 1 s
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "PENDING" and delivery["attempts"] == 1
    url = f"{BASE}/{endpoint_id}/recover"
    body: dict[str, object] = {"since": isoformat(since)}
    assert (await client.post(url, json=body, headers=sandbox.headers)).json() == {"recovered": 0}

    body["include_failing"] = True
    assert (await client.post(url, json=body, headers=sandbox.headers)).json() == {"recovered": 1}
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["next_attempt_at"] == isoformat(clock.now())  # due at once, not in 1 s
    assert (await client.post(url, json=body, headers=sandbox.headers)).json() == {"recovered": 0}
    # A new schedule: seven more failures before EXHAUSTED (eight attempts in all).
    await _exhaust(runtime, clock, deliveries)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "EXHAUSTED" and delivery["attempts"] == 8


async def test_recover_of_a_disabled_endpoint_leaves_the_deliveries_paused(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url("/status/500"))
    since = clock.now()
    await create_intent(client, sandbox)
    await _exhaust(runtime, clock, deliveries)
    await client.patch(f"{BASE}/{endpoint_id}", json={"enabled": False}, headers=sandbox.headers)
    url = f"{BASE}/{endpoint_id}/recover"
    body = {"since": isoformat(since)}
    assert (await client.post(url, json=body, headers=sandbox.headers)).json() == {"recovered": 1}
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "PENDING" and delivery["next_attempt_at"] is None
    assert await deliveries.run_until_idle(runtime) == 0
    await client.patch(f"{BASE}/{endpoint_id}", json={"enabled": True}, headers=sandbox.headers)
    assert await deliveries.run_until_idle(runtime) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "since"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-11-20", "include_failing": "yes"}, "include_failing"),
        ({"since": "2026-11-20", "extra": 1}, "extra"),
    ],
)
async def test_recover_refuses_bad_input_and_other_applications_endpoints(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    body: dict[str, object],
    field: str,
) -> None:
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url())
    url = f"{BASE}/{endpoint_id}/recover"
    response = await client.post(url, json=body, headers=sandbox.headers)
    error = assert_error(response, 400, "VALIDATION_ERROR")
    assert field in str(error["details"])
    other = await new_application(runtime)
    response = await client.post(url, json={"since": "2026-11-20"}, headers=other.headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    missing = await client.post(
        f"{BASE}/whe_nope/recover", json={"since": "2026-11-20"}, headers=sandbox.headers
    )
    assert missing.status_code == 404
