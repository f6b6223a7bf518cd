"""Deliveries through HTTP to a real local receiver: signature, body bytes, filters, secrets,
the retry schedule with compressed times, exhaustion, manual retry, failure kinds."""

from __future__ import annotations

import time
from datetime import timedelta

import httpx
import orjson
import pytest

from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.kit import Sandbox, new_application, refused_address
from tests.webhooks.helpers import (
    BASE,
    Hooks,
    create_endpoint,
    create_intent,
    deliveries_of,
    independent_signature_ok,
)
from tests.webhooks.receiver import Receiver

SCHEDULE = [1, 2, 3, 4, 5, 6]


pytestmark = pytest.mark.settings(
    webhook_retry_schedule=",".join(map(str, SCHEDULE)),
    webhook_timeout_seconds=0.5,
    # The schedule test jumps the clock by days while failing: neither the circuit breaker
    # nor automatic disabling here (tests/webhooks/test_auto_disable.py).
    webhook_disable_after_attempts=1000,
    webhook_breaker_failures=1000,
)


async def test_a_delivery_is_signed_and_carries_the_stored_bytes(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    endpoint_id, secret = await create_endpoint(client, sandbox, receiver.url("/hook"))
    intent_id = await create_intent(client, sandbox)
    pending = await deliveries_of(client, sandbox, endpoint_id)
    assert [d["status"] for d in pending] == ["PENDING"]
    assert pending[0]["attempts"] == 0 and pending[0]["event_type"] == "payment_intent.created"

    assert await deliveries.run_until_idle(runtime) == 1
    [request] = receiver.requests
    assert request.headers["content-type"] == "application/json"
    assert independent_signature_ok(secret, request.headers, request.body)
    assert abs(int(request.headers["x-pay-timestamp"]) - time.time()) < 300
    body = orjson.loads(request.body)
    assert set(body) == {"id", "type", "created_at", "data"}
    assert body["type"] == "payment_intent.created"
    assert request.headers["x-pay-event-id"] == body["id"]
    assert body["data"]["payment_intent_id"] == intent_id
    assert body["data"]["amount"] == 1500 and body["data"]["currency"] == "CLP"
    # The exact bytes stored with the event, the same ones GET /v1/events returns.
    listed = await client.get("/v1/events", params={"payment_intent_id": intent_id}, headers=sandbox.headers)
    assert request.body in listed.content
    # A re-serialized body would not verify.
    reserialized = orjson.dumps(body, option=orjson.OPT_INDENT_2)
    assert not independent_signature_ok(secret, request.headers, reserialized)

    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "SUCCEEDED"
    assert delivery["attempts"] == 1
    # A loopback receiver: the status is kept, never its answer (see test_private_targets.py).
    assert delivery["response_status"] == 200 and delivery["response_excerpt"] is None
    assert delivery["error"] is None and delivery["next_attempt_at"] is None
    assert delivery["event_id"] == body["id"] and delivery["endpoint_id"] == endpoint_id
    assert delivery["id"].startswith("whd_") and delivery["last_attempt_at"]
    # Nothing is sent twice once it succeeded.
    assert await deliveries.run_until_idle(runtime) == 0
    assert len(receiver.requests) == 1


async def test_each_endpoint_receives_its_own_copy_signed_with_its_own_secret(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    _, secret_a = await create_endpoint(client, sandbox, receiver.url("/a"))
    _, secret_b = await create_endpoint(client, sandbox, receiver.url("/b"))
    await create_intent(client, sandbox)
    await deliveries.run_until_idle(runtime)
    [a] = receiver.at("/a")
    [b] = receiver.at("/b")
    assert a.headers["x-pay-event-id"] == b.headers["x-pay-event-id"]
    assert independent_signature_ok(secret_a, a.headers, a.body)
    assert independent_signature_ok(secret_b, b.headers, b.body)
    assert not independent_signature_ok(secret_b, a.headers, a.body)
    assert not independent_signature_ok(secret_a, b.headers, b.body)


async def test_per_event_filters_disabled_endpoints_and_other_applications(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    every, _ = await create_endpoint(client, sandbox, receiver.url("/every"))
    created_only, _ = await create_endpoint(
        client, sandbox, receiver.url("/created"), ["payment_intent.created"]
    )
    authorized_only, _ = await create_endpoint(
        client, sandbox, receiver.url("/authorized"), ["payment.authorized"]
    )
    disabled, _ = await create_endpoint(client, sandbox, receiver.url("/disabled"))
    await client.patch(f"{BASE}/{disabled}", json={"enabled": False}, headers=sandbox.headers)
    other = await new_application(runtime)
    await create_endpoint(client, other, receiver.url("/other"))

    await create_intent(client, sandbox)
    assert len(await deliveries_of(client, sandbox, every)) == 1
    assert len(await deliveries_of(client, sandbox, created_only)) == 1
    assert await deliveries_of(client, sandbox, authorized_only) == []
    assert await deliveries_of(client, sandbox, disabled) == []
    await deliveries.run_until_idle(runtime)
    assert sorted(r.path for r in receiver.requests) == ["/created", "/every"]


async def test_failures_follow_the_schedule_then_exhaust_and_a_manual_retry_restarts_it(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await hooks.queued("/status/500")
    start = clock.now()
    for attempt in range(1, 8):
        assert await deliveries.run_until_idle(runtime) == 1, attempt
        [delivery] = await deliveries_of(client, sandbox, endpoint_id)
        assert delivery["attempts"] == attempt
        assert delivery["response_status"] == 500
        assert delivery["response_excerpt"] is None  # a loopback receiver's answer is not kept
        assert delivery["error"] == "unexpected_status"
        if attempt < 7:
            assert delivery["status"] == "PENDING"
            wait = SCHEDULE[attempt - 1]
            # Not due a moment before the wait is over...
            clock.advance(wait - 0.001)
            assert await deliveries.run_until_idle(runtime) == 0
            clock.advance(0.001)
        else:
            assert delivery["status"] == "EXHAUSTED"
            assert delivery["next_attempt_at"] is None
    assert len(receiver.requests) == 7
    stamps = [int(r.headers["x-pay-timestamp"]) for r in receiver.requests]
    assert stamps == sorted(set(stamps))  # a fresh timestamp (and signature) for every attempt
    assert clock.now() - start == timedelta(seconds=sum(SCHEDULE))
    # Much later, nothing more is attempted for this delivery. (Other tests' deliveries in the
    # shared database may fall due when the clock jumps, so judge this one, not the total.)
    sent = len(receiver.requests)
    clock.advance(10**6)
    await deliveries.run_until_idle(runtime)
    assert len(receiver.requests) == sent

    detail = (
        await client.get(f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers)
    ).json()
    assert [a["number"] for a in detail["attempt_history"]] == list(range(1, 8))
    assert all(a["error"] == "unexpected_status" for a in detail["attempt_history"])
    assert all(a["duration_ms"] >= 0 for a in detail["attempt_history"])

    # The endpoint is fixed; the manual retry attempts at once with a new 7-attempt schedule.
    await client.patch(
        f"{BASE}/{endpoint_id}", json={"url": receiver.url("/status/503")}, headers=sandbox.headers
    )
    retry_url = f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}/retry"
    response = await client.post(retry_url, headers=sandbox.headers)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "PENDING" and response.json()["id"] == delivery["id"]
    for _ in range(8, 15):  # seven more attempts: the schedule really restarted
        assert await deliveries.run_until_idle(runtime) == 1
        clock.advance(max(SCHEDULE))
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "EXHAUSTED" and delivery["attempts"] == 14
    assert delivery["response_status"] == 503

    await client.patch(f"{BASE}/{endpoint_id}", json={"url": receiver.url("/ok")}, headers=sandbox.headers)
    assert (await client.post(retry_url, headers=sandbox.headers)).status_code == 202
    assert await deliveries.run_until_idle(runtime) == 1
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "SUCCEEDED" and delivery["attempts"] == 15
    history = (
        await client.get(f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers)
    ).json()
    assert len(history["attempt_history"]) == 15  # history kept across schedules

    again = await client.post(retry_url, headers=sandbox.headers)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "WEBHOOK_DELIVERY_ALREADY_SUCCEEDED"
    missing = await client.post(f"{BASE}/{endpoint_id}/deliveries/whd_nope/retry", headers=sandbox.headers)
    assert missing.status_code == 404


@pytest.mark.parametrize(
    ("path", "error", "status"),
    [
        ("/status/404", "unexpected_status", 404),
        ("/status/204", None, 204),
        ("/redirect", "unexpected_status", 302),  # never followed
        ("/sleep/2", "timeout", None),  # longer than PAYORCH_WEBHOOK_TIMEOUT_SECONDS (0.5)
    ],
)
async def test_only_a_2xx_in_time_succeeds(
    path: str, error: str | None, status: int | None, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await hooks.delivered(path)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["error"] == error
    assert delivery["response_status"] == status
    assert delivery["status"] == ("SUCCEEDED" if error is None else "PENDING")
    assert [r.path for r in receiver.requests] == [path]  # the redirect target was never asked


async def test_a_refused_connection_is_a_network_error(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, deliveries: WebhookDeliveries
) -> None:
    with refused_address(4400) as address:
        endpoint_id, _ = await create_endpoint(client, sandbox, f"http://{address}/nobody-listens")
        await create_intent(client, sandbox)
        await deliveries.run_until_idle(runtime)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["error"] == "network_error" and delivery["status"] == "PENDING"
    assert delivery["response_status"] is None


async def test_deliveries_list_pages_newest_first(
    client: httpx.AsyncClient, sandbox: Sandbox, receiver: Receiver
) -> None:
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url())
    for n in range(3):
        await create_intent(client, sandbox, f"order-{n}")
    items = await deliveries_of(client, sandbox, endpoint_id)
    page = (
        await client.get(f"{BASE}/{endpoint_id}/deliveries", params={"limit": 2}, headers=sandbox.headers)
    ).json()
    assert [d["id"] for d in page["items"]] == [d["id"] for d in items[:2]]
    assert items == sorted(items, key=lambda d: d["id"], reverse=True)
    rest = (
        await client.get(
            f"{BASE}/{endpoint_id}/deliveries",
            params={"limit": 2, "cursor": page["next_cursor"]},
            headers=sandbox.headers,
        )
    ).json()
    assert [d["id"] for d in rest["items"]] == [items[2]["id"]] and rest["next_cursor"] is None


async def test_a_disabled_endpoint_pauses_its_deliveries_until_enabled(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await hooks.queued("/paused")
    url = f"{BASE}/{endpoint_id}"
    await client.patch(url, json={"enabled": False}, headers=sandbox.headers)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "PENDING" and delivery["next_attempt_at"] is None
    assert await deliveries.run_until_idle(runtime) == 0
    await create_intent(client, sandbox, "order-2")  # not queued for a disabled endpoint
    assert len(await deliveries_of(client, sandbox, endpoint_id)) == 1

    await client.patch(url, json={"enabled": True}, headers=sandbox.headers)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["next_attempt_at"] is not None
    assert await deliveries.run_until_idle(runtime) == 1
    assert [r.path for r in receiver.requests] == ["/paused"]


async def test_deliveries_are_scoped_to_their_endpoint_and_application(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, receiver: Receiver
) -> None:
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url())
    sibling_id, _ = await create_endpoint(client, sandbox, receiver.url("/sibling"), ["payment.failed"])
    await create_intent(client, sandbox)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    other = await new_application(runtime)
    other_endpoint, _ = await create_endpoint(client, other, receiver.url())
    for app, endpoint in ((other, endpoint_id), (other, other_endpoint), (sandbox, sibling_id)):
        path = f"{BASE}/{endpoint}/deliveries/{delivery['id']}"
        assert (await client.get(path, headers=app.headers)).status_code == 404
        assert (await client.post(path + "/retry", headers=app.headers)).status_code == 404
    assert (await client.get(f"{BASE}/{endpoint_id}/deliveries", headers=other.headers)).status_code == 404
