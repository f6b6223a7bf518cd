"""Provider A (POST redirect) end to end through HTTP: checkout, the simulator page submitted as
a browser would, the return handler, on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx

from payorch.clock import FrozenClock, isoformat
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.providers.helpers import RETURN_URL, A, events_of, pay, query_of, read, start

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def test_approve_authorizes_with_a_payment(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    assert body["payment_intent_id"] == intent["id"]
    assert body["status"] == "REQUIRES_ACTION" and body["provider"] == A
    assert body["checkout"]["type"] == "REDIRECT" and body["checkout"]["method"] == "POST"
    assert set(body["checkout"]["fields"]) == {"token_ws"}
    assert body["checkout"]["url"].startswith("http://testserver/simulator/provider_a/")
    assert TIMESTAMP.match(body["expires_at"])
    # PAYORCH_CHECKOUT_TTL_SECONDS (600) shortened to the provider token's 5 minutes.
    assert body["expires_at"] == isoformat(clock.now() + timedelta(seconds=300))

    trip = await pay(client, body, "approve")
    assert trip.left_to is not None, trip
    assert trip.left_to.startswith("https://shop.example/return?")
    assert query_of(trip.left_to) == {
        "order": "1",
        "payment_intent_id": intent["id"],
    }  # no status for A

    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED" and read_back["provider"] == A
    payment = read_back["payment"]
    assert payment["id"].startswith("pay_") and payment["status"] == "AUTHORIZED"
    assert payment["authorization_code"] and TIMESTAMP.match(payment["authorized_at"])
    assert [t["type"] for t in read_back["timeline"]] == [
        "payment_intent.created",
        "payment.checkout.started",
        "payment.authorized",
    ]
    events = await events_of(runtime, intent["id"])
    started = dict(events[1]["data"])
    assert started.pop("routing")["chosen"] == A  # why A (docs/routing.md)
    about = {"external_reference": intent["external_reference"], "metadata": intent["metadata"]}
    assert started == {"payment_intent_id": intent["id"], **about, "provider": A}
    assert events[2]["data"] == {
        "payment_intent_id": intent["id"],
        **about,
        "payment_id": payment["id"],
        "provider": A,
        "amount": 1500,
        "currency": "CLP",
        "capture_method": "automatic",
    }


async def test_reject_fails(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    trip = await pay(client, body, "reject")
    assert trip.left_to and query_of(trip.left_to)["payment_intent_id"] == intent["id"]
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "FAILED" and "payment" not in read_back
    failed = (await events_of(runtime, intent["id"]))[-1]
    assert failed["type"] == "payment.failed"
    assert failed["data"]["provider"] == A and failed["data"]["reason"]


async def test_cancel_comes_back_by_post_and_cancels(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    trip = await pay(client, body, "cancel")
    assert trip.left_to and query_of(trip.left_to)["payment_intent_id"] == intent["id"]
    assert (await read(client, sandbox, intent["id"]))["status"] == "CANCELLED"
    cancelled = (await events_of(runtime, intent["id"]))[-1]
    assert cancelled["type"] == "payment.cancelled" and cancelled["data"]["reason"]


async def test_timeout_shape_does_not_authorize(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    trip = await pay(client, body, "timeout")
    assert trip.left_to
    # The buyer let the payment form time out: nothing to commit, the checkout expired.
    assert (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED"
    assert (await events_of(runtime, intent["id"]))[-1]["type"] == "payment.expired"


async def test_error_shape_fails(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    trip = await pay(client, body, "error")
    assert trip.left_to
    assert (await read(client, sandbox, intent["id"]))["status"] == "FAILED"


async def test_return_url_keeps_its_own_query(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    trip = await pay(client, body, "approve")
    assert trip.left_to == f"{RETURN_URL}&payment_intent_id={intent['id']}"
