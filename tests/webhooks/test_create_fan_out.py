"""A create's deliveries, through HTTP on both databases. On PostgreSQL a create is one statement
carrying ids for FAN_OUT_AT_ONCE deliveries (payorch.intents.create_at_once); with more endpoints
subscribed it takes the full path. Either way: one delivery per subscribed, enabled endpoint, and
a create that fails in its last write leaves nothing behind."""

from __future__ import annotations

import asyncio
import re

import asyncpg
import httpx
import pytest

from payorch.app import create_app
from payorch.http.responses import REPLAY_HEADER
from payorch.ids import id_pattern
from payorch.webhooks import fanout, wakeups
from tests.kit import Sandbox, intent_body
from tests.webhooks.helpers import BASE, Hooks, create_endpoint, create_intent, deliveries_of
from tests.webhooks.receiver import Receiver

CREATED = "payment_intent.created"


@pytest.mark.parametrize(
    "subscribed",
    [1, fanout.FAN_OUT_AT_ONCE, fanout.FAN_OUT_AT_ONCE + 1, fanout.FAN_OUT_AT_ONCE + 3],
)
async def test_each_subscribed_enabled_endpoint_gets_one_delivery(
    client: httpx.AsyncClient, sandbox: Sandbox, receiver: Receiver, subscribed: int
) -> None:
    every_type = [
        (await create_endpoint(client, sandbox, receiver.url(f"/all{n}")))[0] for n in range(subscribed - 1)
    ]
    by_type, _ = await create_endpoint(client, sandbox, receiver.url("/created"), [CREATED])
    other_type, _ = await create_endpoint(client, sandbox, receiver.url("/other"), ["payment.authorized"])
    disabled, _ = await create_endpoint(client, sandbox, receiver.url("/off"))
    response = await client.patch(f"{BASE}/{disabled}", json={"enabled": False}, headers=sandbox.headers)
    assert response.status_code == 200, response.text

    intent_id = await create_intent(client, sandbox, "fan")

    ids, event_ids = [], set()
    for endpoint_id in [*every_type, by_type]:
        [delivery] = await deliveries_of(client, sandbox, endpoint_id)
        assert delivery["event_type"] == CREATED and delivery["status"] == "PENDING"
        ids.append(delivery["id"])
        event_ids.add(delivery["event_id"])
    assert len(set(ids)) == subscribed
    events = await client.get("/v1/events", params={"payment_intent_id": intent_id}, headers=sandbox.headers)
    assert event_ids == {event["id"] for event in events.json()["items"]}  # the one event
    assert all(re.match(id_pattern("whd"), i) for i in ids)
    assert await deliveries_of(client, sandbox, other_type) == []
    assert await deliveries_of(client, sandbox, disabled) == []


async def test_a_create_that_fails_in_its_last_write_leaves_nothing(
    monkeypatch: pytest.MonkeyPatch, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    first, _ = await create_endpoint(client, sandbox, receiver.url("/1"))
    second, _ = await create_endpoint(client, sandbox, receiver.url("/2"))
    # Both deliveries get the same id: the deliveries' INSERT, the create's last write, fails.
    monkeypatch.setattr(fanout, "new_id", lambda prefix: f"{prefix}_{'0' * 29}")
    headers = {**sandbox.headers, "Idempotency-Key": "fails-late"}
    # The app answers 500 and re-raises (for the server's log): keep the answer, not the raise.
    transport = httpx.ASGITransport(app=create_app(runtime=runtime), raise_app_exceptions=False)
    failing = httpx.AsyncClient(transport=transport, base_url="http://testserver")
    async with failing:
        response = await failing.post(
            "/v1/payment-intents", json=intent_body(sandbox, external_reference="late"), headers=headers
        )
    assert response.status_code == 500
    listed = await client.get(
        "/v1/payment-intents", params={"external_reference": "late"}, headers=sandbox.headers
    )
    assert listed.json()["items"] == []  # no intent, and so no event
    assert await deliveries_of(client, sandbox, first) == []
    assert await deliveries_of(client, sandbox, second) == []

    monkeypatch.undo()
    # The key was not stored either: the same request now creates the intent, once.
    response = await client.post(
        "/v1/payment-intents", json=intent_body(sandbox, external_reference="late"), headers=headers
    )
    assert response.status_code == 201, response.text
    assert REPLAY_HEADER not in response.headers
    assert len(await deliveries_of(client, sandbox, first)) == 1
    assert await deliveries.run_until_idle(runtime) == 2


async def test_a_create_with_deliveries_wakes_the_workers_at_its_commit(
    client: httpx.AsyncClient, sandbox: Sandbox, receiver: Receiver, database_url: str
) -> None:
    """PostgreSQL: the one-statement create sends the workers' wake-up (its `notice` fragment
    names the channel the worker LISTENs on), and only when it queued deliveries."""
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite wakes the workers of its own process (webhooks/wakeups.py)")
    listener = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    woken = asyncio.Event()
    await listener.add_listener(wakeups.NOTIFY_CHANNEL, lambda *_: woken.set())
    try:
        await create_intent(client, sandbox, "quiet")
        await asyncio.sleep(0.3)
        assert not woken.is_set()  # no endpoint: nothing queued, no wake-up

        await create_endpoint(client, sandbox, receiver.url("/woken"))
        await create_intent(client, sandbox, "woken")
        await asyncio.wait_for(woken.wait(), timeout=5)
    finally:
        await listener.close()
