"""Webhook tools through HTTP, on SQLite and PostgreSQL: a test event sent to one endpoint and
delivered by the normal engine; a secret rotated with an overlap window (notices verify with
either secret during it, only with the new one after); a delivery read with its body and its
payment intent. Failure reasons: tests/webhooks/test_failure_reasons.py."""

from __future__ import annotations

import asyncio
import base64

import httpx
import orjson
import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as StandardVerificationError

from payorch.client.errors import WebhookVerificationError
from payorch.client.webhooks import verify
from tests.kit import Sandbox, assert_error
from tests.webhooks.helpers import BASE, Hooks, create_endpoint, create_intent, deliveries_of
from tests.webhooks.receiver import Receiver


async def test_a_test_event_goes_to_that_endpoint_only_marked_as_a_test(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, secret = await create_endpoint(client, sandbox, receiver.url("/tested"))
    other_id, _ = await create_endpoint(client, sandbox, receiver.url("/other"))
    sent = await client.post(f"{BASE}/{endpoint_id}/test", headers=sandbox.headers)
    assert sent.status_code == 202, sent.text
    queued = sent.json()
    assert queued["event_type"] == "webhook.test" and queued["status"] == "PENDING"
    assert queued["endpoint_id"] == endpoint_id and queued["failure_reason"] is None

    assert await deliveries.run_until_idle(runtime) == 1
    [request] = receiver.requests
    assert request.path == "/tested"  # the other endpoint got nothing
    event = verify(request.body, request.headers, secret, now=clock.now().timestamp())
    assert event.type == "webhook.test" and event.test is True
    body = orjson.loads(request.body)
    assert body["test"] is True and body["data"]["webhook_endpoint_id"] == endpoint_id
    assert await deliveries_of(client, sandbox, other_id) == []

    # The delivery's page: the exact bytes sent, no payment intent (a test is about the endpoint).
    read = await client.get(f"{BASE}/{endpoint_id}/deliveries/{queued['id']}", headers=sandbox.headers)
    assert read.status_code == 200, read.text
    detail = read.json()
    assert detail["status"] == "SUCCEEDED" and detail["payload"].encode() == request.body
    assert detail["payment_intent_id"] is None
    assert detail["attempt_history"][0]["failure_reason"] is None

    # It is an event like the others: GET /v1/events lists it (the exact body sent).
    listed = await client.get("/v1/events", headers=sandbox.headers)
    assert request.body in listed.content


async def test_a_test_event_is_refused_for_a_disabled_endpoint_and_capped(
    client: httpx.AsyncClient, sandbox: Sandbox, receiver: Receiver
) -> None:
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url("/capped"))
    for _ in range(10):  # no worker runs: they all stay PENDING
        sent = await client.post(f"{BASE}/{endpoint_id}/test", headers=sandbox.headers)
        assert sent.status_code == 202, sent.text
    over = await client.post(f"{BASE}/{endpoint_id}/test", headers=sandbox.headers)
    assert_error(over, 409, "LIMIT_EXCEEDED")
    assert over.json()["error"]["details"]["limit"] == 10

    disabled, _ = await create_endpoint(client, sandbox, receiver.url("/off"))
    patched = await client.patch(f"{BASE}/{disabled}", json={"enabled": False}, headers=sandbox.headers)
    assert patched.status_code == 200, patched.text
    refused = await client.post(f"{BASE}/{disabled}/test", headers=sandbox.headers)
    assert_error(refused, 409, "INVALID_STATE")
    missing = await client.post(f"{BASE}/whe_nope/test", headers=sandbox.headers)
    assert_error(missing, 404, "RESOURCE_NOT_FOUND")


async def test_the_cap_of_pending_test_deliveries_holds_under_concurrent_requests(
    client: httpx.AsyncClient, sandbox: Sandbox, receiver: Receiver
) -> None:
    # 30 at once: each counts after the endpoint's row is locked, so at most 10 are queued.
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url("/raced"))
    url = f"{BASE}/{endpoint_id}/test"
    answers = await asyncio.gather(*(client.post(url, headers=sandbox.headers) for _ in range(30)))
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [202] * 10 + [409] * 20, [a.text for a in answers if a.status_code not in (202, 409)]
    for refused in (a for a in answers if a.status_code == 409):
        assert_error(refused, 409, "LIMIT_EXCEEDED")
    queued = await deliveries_of(client, sandbox, endpoint_id)
    assert len(queued) == 10 and {d["status"] for d in queued} == {"PENDING"}


def _whsec(secret: str) -> str:
    return "whsec_" + base64.b64encode(secret.encode()).decode()


async def test_a_rotated_secret_overlaps_then_only_the_new_one_signs(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, old = await create_endpoint(client, sandbox, receiver.url("/rotated"))
    rotated = await client.post(
        f"{BASE}/{endpoint_id}/secret/rotate", json={"overlap_seconds": 60}, headers=sandbox.headers
    )
    assert rotated.status_code == 200, rotated.text
    data = rotated.json()["data"]
    new = data["secret"]
    assert len(new) == 64 and new != old and data["previous_secret_expires_at"] is not None
    read = await client.get(f"{BASE}/{endpoint_id}", headers=sandbox.headers)
    assert "secret" not in read.json()  # shown once, never again
    assert read.json()["previous_secret_expires_at"] == data["previous_secret_expires_at"]

    # During the overlap: both secrets sign; a receiver holding either one verifies.
    await create_intent(client, sandbox, "rotated-1")
    assert await deliveries.run_until_idle(runtime) == 1
    during = receiver.requests[-1]
    now = clock.now().timestamp()
    assert len(during.headers["x-pay-signature"].split(",")) == 2
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    for secret in (old, new, [new, old]):
        assert verify(during.body, during.headers, secret, now=now).type == "payment_intent.created"
    for secret in (old, new):  # the Standard Webhooks library too (it checks the real clock)
        assert Webhook(_whsec(secret)).verify(during.body, during.headers)["id"]

    # After it: only the new secret signs.
    clock.advance(61)
    await create_intent(client, sandbox, "rotated-2")
    assert await deliveries.run_until_idle(runtime) == 1
    after = receiver.requests[-1]
    now = clock.now().timestamp()
    assert "," not in after.headers["x-pay-signature"]
    assert verify(after.body, after.headers, new, now=now).id
    assert verify(after.body, after.headers, [old, new], now=now).id  # a list still works
    with pytest.raises(WebhookVerificationError):
        verify(after.body, after.headers, old, now=now)
    with pytest.raises(StandardVerificationError):
        Webhook(_whsec(old)).verify(after.body, after.headers)


async def test_rotation_bounds_and_an_immediate_rotation(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, old = await create_endpoint(client, sandbox, receiver.url("/bounds"))
    url = f"{BASE}/{endpoint_id}/secret/rotate"
    assert (
        await client.post(url, json={"overlap_seconds": 60.0}, headers=sandbox.headers)
    ).status_code == 200
    for wrong in (
        {"overlap_seconds": 7 * 86400 + 1},
        {"overlap_seconds": -1},
        {"overlap_seconds": 1.5},
        {"other": 1},
    ):
        assert_error(await client.post(url, json=wrong, headers=sandbox.headers), 400, "VALIDATION_ERROR")
    default = await client.post(url, json={}, headers=sandbox.headers)
    assert default.status_code == 200, default.text
    at_once = await client.post(url, json={"overlap_seconds": 0}, headers=sandbox.headers)
    data = at_once.json()["data"]
    assert data["previous_secret_expires_at"] is None
    await create_intent(client, sandbox, "bounds")
    assert await deliveries.run_until_idle(runtime) == 1
    [request] = receiver.requests
    now = clock.now().timestamp()
    assert verify(request.body, request.headers, data["secret"], now=now).id
    for replaced in (old, default.json()["data"]["secret"]):
        with pytest.raises(WebhookVerificationError):
            verify(request.body, request.headers, replaced, now=now)
    missing = await client.post(f"{BASE}/whe_nope/secret/rotate", json={}, headers=sandbox.headers)
    assert_error(missing, 404, "RESOURCE_NOT_FOUND")


async def test_a_delivery_of_an_intent_links_its_payment_intent(hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    endpoint_id, intent_id = await hooks.delivered("/status/503", "linked")
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["failure_reason"] == "http_status"
    assert delivery["failure_message"].startswith("HTTP 503")
    read = await client.get(f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers)
    detail = read.json()
    assert detail["payment_intent_id"] == intent_id
    assert orjson.loads(detail["payload"])["data"]["payment_intent_id"] == intent_id
    [attempt] = detail["attempt_history"]
    assert attempt["failure_reason"] == "http_status" and attempt["response_status"] == 503
