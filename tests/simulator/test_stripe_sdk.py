"""The official ``stripe`` SDK, unchanged, against simulated provider C on a live server.

uvicorn serves the app on 127.0.0.1 (a free port, its own SQLite database) in a thread of this
process, so the test can also receive the simulator's signed events; the SDK talks to it over
TCP with the published test key (docs/simulator.md), only its API base pointed at
``{PUBLIC_URL}/simulator/provider_c``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import stripe

from payorch.crypto import Cipher
from payorch.providers.provider_c.registration import mock_credentials
from payorch.simulator.provider_c.simulated import SIMULATED
from tests.simulator.helpers import hooked_server

pytestmark = pytest.mark.slow

SECRET = "sdk-test-secret-key-0123456789abcdefghij"  # noqa: S105 - a test key
DOCS = Path(__file__).resolve().parents[2] / "docs" / "simulator.md"
# As docs/simulator.md prints them.
C_SECRET_KEY = "sk_test_payorchsandboxpublickey"  # noqa: S105
C_WEBHOOK_SECRET = "whsec_payorchsandboxpublicwebhooksecret"  # noqa: S105
HOOK_PATH = "/test-hooks/stripe-events"
RECEIVED: list[tuple[dict[str, str], bytes]] = []
SANDBOX: dict[str, str] = {}  # the SANDBOX application the server fixture creates (its API key)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with hooked_server(tmp_path_factory.mktemp("stripe"), SECRET, HOOK_PATH, SIMULATED) as served:
        SANDBOX.update(served.sandbox)
        RECEIVED[:] = []
        served.received = RECEIVED
        stripe.api_key = C_SECRET_KEY
        stripe.api_base = served.url + "/simulator/provider_c"
        yield served.url


def _session(server: str, reference: str, **options: Any) -> stripe.checkout.Session:
    return stripe.checkout.Session.create(
        **options,
        mode="payment",
        line_items=[
            {
                "price_data": {"currency": "clp", "unit_amount": 15000, "product_data": {"name": "Book"}},
                "quantity": 1,
            }
        ],
        success_url=server + "/done?session_id={CHECKOUT_SESSION_ID}",
        cancel_url=server + "/cancelled",
        client_reference_id=reference,
        metadata={"payorch_notification_url": server + HOOK_PATH},
    )


def test_the_public_key_is_the_documented_one() -> None:
    text = DOCS.read_text()
    assert f"`{C_SECRET_KEY}`" in text and f"`{C_WEBHOOK_SECRET}`" in text


def test_checkout_pay_refund_expire_list_with_the_official_sdk(server: str) -> None:
    session = _session(server, "order-sdk-1")
    assert session.status == "open" and session.url
    read = stripe.checkout.Session.retrieve(session.id, expand=["payment_intent"])
    assert read.payment_intent is None and read.amount_total == 15000
    paid = httpx.post(session.url, data={"outcome": "approve"})  # the page's form, as a browser
    assert paid.status_code == 303
    assert paid.headers["location"] == f"{server}/done?session_id={session.id}"
    after = stripe.checkout.Session.retrieve(session.id, expand=["payment_intent"])
    assert (after.status, after.payment_status) == ("complete", "paid")
    intent = after.payment_intent
    assert isinstance(intent, stripe.PaymentIntent) and intent.status == "succeeded"
    refund = stripe.Refund.create(payment_intent=intent.id, amount=5000)
    assert (refund.status, refund.amount, refund.payment_intent) == ("succeeded", 5000, intent.id)
    listed = stripe.checkout.Session.list(payment_intent=intent.id)
    assert [s.id for s in listed.data] == [session.id]
    other = _session(server, "order-sdk-2")
    expired = stripe.checkout.Session.expire(other.id)
    assert expired.status == "expired"
    with pytest.raises(stripe.InvalidRequestError):
        stripe.checkout.Session.expire(other.id)


def test_an_event_the_simulator_signs_verifies_with_construct_event(server: str) -> None:
    RECEIVED.clear()
    session = _session(server, "order-sdk-3")
    httpx.post(session.url, data={"outcome": "approve"})
    deadline = time.monotonic() + 10
    while not RECEIVED:
        assert time.monotonic() < deadline, "no event arrived"
        time.sleep(0.05)
    headers, body = RECEIVED[0]
    signature = headers.get("stripe-signature", "")
    event = stripe.Webhook.construct_event(body, signature, C_WEBHOOK_SECRET)
    assert event.type == "checkout.session.completed"
    assert event.data.object.id == session.id
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(body, signature, "whsec_wrong")


def _events_of(kind: str, intent_id: str) -> list[stripe.Event]:
    """The events of ``kind`` about ``intent_id`` received so far (signed with the MOCK secret)."""
    secret = mock_credentials(Cipher([SECRET]), SANDBOX["application_id"])["webhook_secret"]
    found = []
    for headers, body in list(RECEIVED):
        signature = headers.get("stripe-signature", "")
        try:
            event = stripe.Webhook.construct_event(body, signature, secret)
        except stripe.SignatureVerificationError:
            continue  # the public key's
        about = event.data.object.to_dict()
        if event.type == kind and intent_id in (about["id"], about.get("payment_intent")):
            found.append(event)
    return found


def _wait_for(kind: str, intent_id: str) -> stripe.Event:
    deadline = time.monotonic() + 10
    while not (found := _events_of(kind, intent_id)):
        assert time.monotonic() < deadline, f"no {kind} arrived"
        time.sleep(0.05)
    return found[0]


def test_manual_capture_partial_capture_cancel_and_a_lapsed_hold_with_the_official_sdk(server: str) -> None:
    key = mock_credentials(Cipher([SECRET]), SANDBOX["application_id"])["secret_key"]
    manual = {"capture_method": "manual"}
    held = []
    for number in range(3):
        session = _session(server, f"order-hold-{number}", payment_intent_data=manual, api_key=key)
        assert httpx.post(session.url, data={"outcome": "approve"}).status_code == 303
        read = stripe.checkout.Session.retrieve(session.id, api_key=key)
        assert (read.status, read.payment_status) == ("complete", "unpaid")
        held.append(stripe.PaymentIntent.retrieve(read.payment_intent, expand=["latest_charge"], api_key=key))
    first = held[0]
    assert (first.status, first.capture_method, first.amount_capturable) == (
        "requires_capture",
        "manual",
        15000,
    )
    capture_before = first.latest_charge.payment_method_details.card.capture_before
    assert 7 * 86400 - 60 <= capture_before - time.time() <= 7 * 86400
    assert (
        _wait_for("payment_intent.amount_capturable_updated", first.id).data.object.amount_capturable == 15000
    )

    with pytest.raises(stripe.InvalidRequestError) as too_much:
        stripe.PaymentIntent.capture(first.id, amount_to_capture=15001, api_key=key)
    assert (too_much.value.code, too_much.value.param) == ("amount_too_large", "amount_to_capture")
    captured = stripe.PaymentIntent.capture(first.id, amount_to_capture=9000, api_key=key)
    assert (captured.status, captured.amount_received, captured.amount_capturable) == ("succeeded", 9000, 0)
    assert _wait_for("charge.captured", first.id).data.object.amount_captured == 9000
    assert _wait_for("payment_intent.succeeded", first.id).data.object.amount_received == 9000
    with pytest.raises(stripe.InvalidRequestError) as again:
        stripe.PaymentIntent.capture(first.id, api_key=key)
    assert again.value.code == "payment_intent_unexpected_state"
    refund = stripe.Refund.create(payment_intent=first.id, amount=4000, api_key=key)
    assert refund.amount == 4000

    canceled = stripe.PaymentIntent.cancel(
        held[1].id, cancellation_reason="requested_by_customer", api_key=key
    )
    assert (canceled.status, canceled.cancellation_reason) == ("canceled", "requested_by_customer")
    assert _wait_for("payment_intent.canceled", held[1].id).data.object.status == "canceled"
    with pytest.raises(stripe.InvalidRequestError) as late:
        stripe.PaymentIntent.capture(held[1].id, api_key=key)
    assert "status of canceled" in str(late.value.user_message)

    moved = httpx.post(
        server + "/simulator/controls/clock",
        json={"advance_seconds": 7 * 86400, "provider": "provider_c"},
        headers={"Authorization": f"Bearer {SANDBOX['api_key']}"},
    )
    assert moved.status_code == 200, moved.text
    assert moved.json()["lapsed"][0]["references"] == [held[2].id]
    lapsed = stripe.PaymentIntent.retrieve(held[2].id, expand=["latest_charge"], api_key=key)
    assert (lapsed.status, lapsed.cancellation_reason) == ("canceled", "automatic")
    assert lapsed.latest_charge.refunded is True
    assert _wait_for("charge.expired", held[2].id).data.object.captured is False
    assert _wait_for("payment_intent.canceled", held[2].id).data.object.cancellation_reason == "automatic"
