"""Provider B (GET redirect) end to end through HTTP: checkout, the simulator page submitted as a
browser would, the return with `status`, signed notifications, settle; SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import httpx
from prometheus_client import REGISTRY

from payorch.clock import FrozenClock, isoformat
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.providers.helpers import (
    B,
    checkout,
    choose_without_returning,
    create_intent,
    events_of,
    pay,
    query_of,
    read,
    start,
)


async def settle(client: httpx.AsyncClient, sandbox, intent_id: str, outcome: str) -> None:  # type: ignore[no-untyped-def]
    response = await client.post(
        "/simulator/controls/settle",
        json={"payment_intent_id": intent_id, "outcome": outcome},
        headers=sandbox.headers,
    )
    assert response.status_code in (200, 201, 202), response.text


async def test_approve_authorizes_and_adds_status(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    assert body["provider"] == B and body["status"] == "REQUIRES_ACTION"
    assert body["checkout"]["method"] == "GET" and body["checkout"]["fields"] == {}
    ttl = timedelta(seconds=runtime.settings.checkout_ttl_seconds)
    assert body["expires_at"] == isoformat(clock.now() + ttl)
    assert body["checkout"]["url"].startswith(
        "http://testserver/simulator/provider_b/checkout/v1/redirect?pref_id="
    )
    trip = await pay(client, body, "approve")
    assert trip.left_to is not None, trip
    params = query_of(trip.left_to)
    assert params == {"order": "1", "payment_intent_id": intent["id"], "status": "AUTHORIZED"}
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED" and read_back["provider"] == B
    assert read_back["payment"]["id"].startswith("pay_")
    events = await events_of(runtime, intent["id"])
    authorized = [e for e in events if e["type"] == "payment.authorized"]
    assert len(authorized) == 1  # the return and the notification both confirmed: one authorization
    assert authorized[0]["data"] == {
        "payment_intent_id": intent["id"],
        "external_reference": intent["external_reference"],
        "metadata": intent["metadata"],
        "payment_id": read_back["payment"]["id"],
        "provider": B,
        "amount": 1500,
        "currency": "CLP",
        "capture_method": "automatic",
    }


async def test_reject_fails(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    trip = await pay(client, body, "reject")
    assert trip.left_to and query_of(trip.left_to)["status"] == "FAILED"
    assert (await read(client, sandbox, intent["id"]))["status"] == "FAILED"
    failed = (await events_of(runtime, intent["id"]))[-1]
    assert failed["type"] == "payment.failed" and failed["data"]["provider"] == B and failed["data"]["reason"]


async def test_cancel_cancels(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    trip = await pay(client, body, "cancel")
    assert trip.left_to and query_of(trip.left_to)["status"] == "CANCELLED"
    cancelled = (await events_of(runtime, intent["id"]))[-1]
    assert cancelled["type"] == "payment.cancelled" and cancelled["data"]["reason"]


async def test_pending_then_settled_by_notification(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    trip = await pay(client, body, "pending")
    assert trip.left_to and query_of(trip.left_to)["status"] == "PROCESSING"
    processing = (await events_of(runtime, intent["id"]))[-1]
    assert processing["type"] == "payment.processing" and processing["data"]["provider"] == B
    await settle(client, sandbox, intent["id"], "approve")  # the simulator notifies us, signed
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"


async def test_pending_then_rejected(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await pay(client, body, "pending")
    await settle(client, sandbox, intent["id"], "reject")
    assert (await read(client, sandbox, intent["id"]))["status"] == "FAILED"


async def test_notification_without_return_authorizes(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await choose_without_returning(client, body, "approve")  # the buyer closed the tab
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"


async def test_forged_notifications_are_refused(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    listed = await client.get(
        f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors",
        headers=sandbox.headers,
    )
    connector_id = next(c["id"] for c in listed.json()["items"] if c["provider"] == B)
    url = f"/v1/provider-notifications/{B}/{connector_id}"
    unsigned = await client.post(url, params={"data.id": "1", "type": "payment"}, json={"data": {"id": "1"}})
    assert unsigned.status_code == 400
    bad = await client.post(
        url,
        params={"data.id": "1", "type": "payment"},
        headers={"x-signature": "ts=1,v1=" + "0" * 64, "x-request-id": "r"},
        json={"type": "payment", "data": {"id": "1"}},
    )
    assert bad.status_code == 400
    assert (await client.post(f"/v1/provider-notifications/{B}/cfg_unknown", json={})).status_code == 404
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"


async def test_replacing_b_by_a_expires_the_preference(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    first = await checkout(client, sandbox, intent["id"], B)
    assert first.status_code == 200
    second = await checkout(client, sandbox, intent["id"], "provider_a_redirect_post")
    assert second.status_code == 200, second.text
    assert second.json()["provider"] == "provider_a_redirect_post"
    # The old B page no longer takes a payment, and nothing it does moves the intent.
    from tests.providers.helpers import open_checkout

    trip = await open_checkout(client, first.json())
    if (
        trip.page is not None
        and trip.page.response.status_code == 200
        and any(("outcome", "approve") in f.buttons for f in trip.page.forms)
    ):
        from tests.providers.browser import Browser

        await Browser(client).press(trip.page, "outcome", "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    await pay(client, second.json(), "approve")
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED" and read_back["provider"] == "provider_a_redirect_post"


async def test_after_a_rejection_the_preference_cannot_be_paid_again(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    from payorch.simulator.credentials import mock_credentials
    from tests.providers.helpers import open_checkout

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await pay(client, body, "reject")
    assert (await read(client, sandbox, intent["id"]))["status"] == "FAILED"
    # The buyer goes back to the old page and tries again: FAILED is final, so the service
    # stopped the preference at the provider and no payment can be approved on it.
    trip = await open_checkout(client, body)
    page = trip.page
    if page is not None and any(("outcome", "approve") in f.buttons for f in page.forms):
        from tests.providers.browser import Browser

        await Browser(client).press(page, "outcome", "approve")
    token = mock_credentials(runtime.cipher, "provider_b", sandbox.application_id)["access_token"]
    found = await client.get(
        "/simulator/provider_b/v1/payments/search",
        params={"external_reference": intent["id"]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert found.status_code == 200, found.text
    statuses = [p["status"] for p in found.json()["results"]]
    assert "approved" not in statuses, statuses
    assert (await read(client, sandbox, intent["id"]))["status"] == "FAILED"


def _payment_reads() -> float:
    """Provider B "read payment" calls this process made so far (the /metrics histogram)."""
    labels = {"provider": B, "operation": "read payment"}
    return REGISTRY.get_sample_value("payorch_provider_call_duration_seconds_count", labels) or 0.0


async def test_a_notification_reads_the_payment_from_the_provider_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    # The read that verifies the notice is the answer confirmed under the checkout's lease: it is
    # not read a second time (the notification runs before the simulator's answer returns here).
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    before = _payment_reads()
    await choose_without_returning(client, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert _payment_reads() - before == 1
