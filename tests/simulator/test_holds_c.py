"""Simulated provider C's manual capture over HTTP (docs/simulator.md, "Holds"): a Checkout
Session with payment_intent_data[capture_method]=manual holds once paid; capture (all or part,
once), cancel, refunds of captured money only, and a hold that lapses, moved by the clock control
or by time and the worker's pass; each with the events the provider sends, on both databases."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from payorch.simulator.jobs import LapseSimulatorHolds
from payorch.simulator.provider_c.holds import HOLD_DAYS
from tests.kit import Sandbox
from tests.simulator.provider_c_app import C, Events, c_app, c_headers, session_form

__all__ = ["c_app"]

CLOCK = "/simulator/controls/clock"
MANUAL = {"payment_intent_data[capture_method]": "manual"}


@pytest.fixture
def http(c_app: tuple[httpx.AsyncClient, Events]) -> httpx.AsyncClient:
    return c_app[0]


@pytest.fixture
def events(c_app: tuple[httpx.AsyncClient, Events]) -> Events:
    return c_app[1]


async def _held(http: httpx.AsyncClient, headers: dict[str, str], reference: str) -> dict[str, Any]:
    """A manual session paid on its page: its PaymentIntent, read with its charge expanded."""
    made = await http.post(
        C + "/v1/checkout/sessions", data=session_form(reference, **MANUAL), headers=headers
    )
    assert made.status_code == 200, made.text
    session = made.json()
    paid = await http.post(httpx.URL(session["url"]).path, data={"outcome": "approve"})
    assert paid.status_code == 303
    read = await http.get(f"{C}/v1/checkout/sessions/{session['id']}", headers=headers)
    assert (read.json()["status"], read.json()["payment_status"]) == ("complete", "unpaid")
    return await _intent(http, headers, read.json()["payment_intent"])


async def _intent(http: httpx.AsyncClient, headers: dict[str, str], intent_id: str) -> dict[str, Any]:
    answer = await http.get(
        f"{C}/v1/payment_intents/{intent_id}", params={"expand[]": "latest_charge"}, headers=headers
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def _types(events: Events, count: int) -> list[tuple[str, dict[str, Any]]]:
    """The first ``count`` events received (type, object), waiting up to 10 s for them."""
    for _ in range(500):
        if len(events.received) >= count:
            break
        await asyncio.sleep(0.02)
    parsed = [json.loads(body) for _, body in events.received]
    return [(event["type"], event["data"]["object"]) for event in parsed]


def _error(answer: httpx.Response, code: str) -> str:
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["type"], error["code"]) == ("invalid_request_error", code)
    return str(error["message"])


async def test_a_manual_session_holds_then_a_partial_capture_takes_part_and_releases_the_rest(
    http: httpx.AsyncClient, events: Events, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    intent = await _held(http, headers, "payi_hold_1")
    now = runtime.clock.now()
    assert (intent["status"], intent["capture_method"]) == ("requires_capture", "manual")
    assert (intent["amount_capturable"], intent["amount_received"]) == (15000, 0)
    charge = intent["latest_charge"]
    assert (charge["captured"], charge["amount_captured"], charge["paid"]) == (False, 0, True)
    capture_before = charge["payment_method_details"]["card"]["capture_before"]
    assert capture_before == int((now + timedelta(days=HOLD_DAYS)).timestamp())
    seen = await _types(events, 2)
    assert [kind for kind, _ in seen] == [
        "checkout.session.completed",
        "payment_intent.amount_capturable_updated",
    ]
    assert seen[1][1]["amount_capturable"] == 15000
    refused = await http.post(C + "/v1/refunds", data={"payment_intent": intent["id"]}, headers=headers)
    assert "does not have a successful charge to refund" in _error(refused, "payment_intent_unexpected_state")

    too_much = await http.post(
        f"{C}/v1/payment_intents/{intent['id']}/capture", data={"amount_to_capture": "15001"}, headers=headers
    )
    assert "(15001)" in _error(too_much, "amount_too_large")
    assert too_much.json()["error"]["param"] == "amount_to_capture"
    assert (await _intent(http, headers, intent["id"]))["status"] == "requires_capture"  # nothing moved

    captured = await http.post(
        f"{C}/v1/payment_intents/{intent['id']}/capture", data={"amount_to_capture": "9000"}, headers=headers
    )
    assert captured.status_code == 200, captured.text
    body = captured.json()
    assert (body["status"], body["amount_received"], body["amount_capturable"]) == ("succeeded", 9000, 0)
    after = await _intent(http, headers, intent["id"])
    charge = after["latest_charge"]
    assert (charge["captured"], charge["amount_captured"], charge["amount_refunded"]) == (True, 9000, 6000)
    seen = await _types(events, 4)
    assert [kind for kind, _ in seen[2:]] == ["charge.captured", "payment_intent.succeeded"]
    assert seen[2][1]["amount_captured"] == 9000 and seen[3][1]["amount_received"] == 9000

    again = await http.post(f"{C}/v1/payment_intents/{intent['id']}/capture", headers=headers)
    assert "already been captured" in _error(again, "payment_intent_unexpected_state")
    over = await http.post(
        C + "/v1/refunds", data={"payment_intent": intent["id"], "amount": "9001"}, headers=headers
    )
    assert "(9000)" in _error(over, "amount_too_large")  # captured money only
    refund = await http.post(
        C + "/v1/refunds", data={"payment_intent": intent["id"], "amount": "4000"}, headers=headers
    )
    assert refund.status_code == 200 and refund.json()["amount"] == 4000
    charge = (await _intent(http, headers, intent["id"]))["latest_charge"]
    assert (charge["amount_refunded"], charge["refunded"]) == (10000, False)


async def test_capture_without_an_amount_takes_all_and_the_session_reads_paid(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    intent = await _held(http, headers, "payi_hold_2")
    captured = await http.post(f"{C}/v1/payment_intents/{intent['id']}/capture", headers=headers)
    assert (captured.json()["status"], captured.json()["amount_received"]) == ("succeeded", 15000)
    listed = await http.get(
        C + "/v1/checkout/sessions", params={"payment_intent": intent["id"]}, headers=headers
    )
    assert listed.json()["data"][0]["payment_status"] == "paid"
    cancel = await http.post(f"{C}/v1/payment_intents/{intent['id']}/cancel", headers=headers)
    assert "status of succeeded" in _error(cancel, "payment_intent_unexpected_state")


async def test_cancel_releases_the_hold_with_its_reason_and_then_capture_is_refused(
    http: httpx.AsyncClient, events: Events, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    intent = await _held(http, headers, "payi_hold_3")
    wrong = await http.post(
        f"{C}/v1/payment_intents/{intent['id']}/cancel",
        data={"cancellation_reason": "bored"},
        headers=headers,
    )
    assert wrong.status_code == 400 and wrong.json()["error"]["param"] == "cancellation_reason"
    canceled = await http.post(
        f"{C}/v1/payment_intents/{intent['id']}/cancel",
        data={"cancellation_reason": "requested_by_customer"},
        headers=headers,
    )
    assert canceled.status_code == 200, canceled.text
    body = canceled.json()
    assert (body["status"], body["cancellation_reason"], body["amount_capturable"]) == (
        "canceled",
        "requested_by_customer",
        0,
    )
    assert body["canceled_at"] == int(runtime.clock.now().timestamp())
    seen = await _types(events, 3)
    assert seen[2][0] == "payment_intent.canceled" and seen[2][1]["status"] == "canceled"
    capture = await http.post(f"{C}/v1/payment_intents/{intent['id']}/capture", headers=headers)
    assert "status of canceled" in _error(capture, "payment_intent_unexpected_state")
    charge = (await _intent(http, headers, intent["id"]))["latest_charge"]
    assert (charge["captured"], charge["refunded"], charge["amount_refunded"]) == (False, True, 15000)


async def test_an_automatic_session_captures_at_once_and_cannot_be_captured_again(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    made = await http.post(C + "/v1/checkout/sessions", data=session_form("payi_auto"), headers=headers)
    await http.post(httpx.URL(made.json()["url"]).path, data={"outcome": "approve"})
    read = await http.get(f"{C}/v1/checkout/sessions/{made.json()['id']}", headers=headers)
    intent = await _intent(http, headers, read.json()["payment_intent"])
    assert (intent["capture_method"], intent["status"], intent["amount_capturable"]) == (
        "automatic",
        "succeeded",
        0,
    )
    assert intent["latest_charge"]["payment_method_details"]["card"]["capture_before"] is None
    capture = await http.post(f"{C}/v1/payment_intents/{intent['id']}/capture", headers=headers)
    assert "already been captured" in _error(capture, "payment_intent_unexpected_state")
    bad = await http.post(
        C + "/v1/checkout/sessions",
        data=session_form("payi_bad", **{"payment_intent_data[capture_method]": "later"}),
        headers=headers,
    )
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "payment_intent_data[capture_method]"


async def test_the_clock_control_lets_a_hold_lapse_canceled_its_charge_expired(
    http: httpx.AsyncClient, events: Events, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    intent = await _held(http, headers, "payi_hold_4")
    early = await http.post(CLOCK, json={"advance_seconds": 6 * 86400}, headers=sandbox.headers)
    assert early.status_code == 200, early.text
    assert {"provider": "provider_c_redirect_get", "references": []} in early.json()["lapsed"]
    assert (await _intent(http, headers, intent["id"]))["status"] == "requires_capture"
    late = await http.post(
        CLOCK, json={"advance_seconds": 86400, "provider": "provider_c"}, headers=sandbox.headers
    )
    assert late.json() == {
        "advanced_seconds": 86400,
        "lapsed": [{"provider": "provider_c_redirect_get", "references": [intent["id"]]}],
    }
    after = await _intent(http, headers, intent["id"])
    assert (after["status"], after["cancellation_reason"], after["amount_capturable"]) == (
        "canceled",
        "automatic",
        0,
    )
    assert after["latest_charge"]["refunded"] is True
    seen = await _types(events, 4)
    assert [kind for kind, _ in seen[2:]] == ["charge.expired", "payment_intent.canceled"]
    capture = await http.post(f"{C}/v1/payment_intents/{intent['id']}/capture", headers=headers)
    assert "status of canceled" in _error(capture, "payment_intent_unexpected_state")


async def test_a_hold_past_its_end_reads_canceled_and_the_worker_sends_its_events(
    http: httpx.AsyncClient, events: Events, runtime: Runtime, sandbox: Sandbox, clock: FrozenClock
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    intent = await _held(http, headers, "payi_hold_5")
    await _types(events, 2)
    clock.advance(HOLD_DAYS * 86400)
    seen = await _intent(http, headers, intent["id"])
    assert (seen["status"], seen["cancellation_reason"]) == ("canceled", "automatic")  # as read
    capture = await http.post(f"{C}/v1/payment_intents/{intent['id']}/capture", headers=headers)
    assert "status of canceled" in _error(capture, "payment_intent_unexpected_state")
    assert len(events.received) == 2  # nothing sent until the worker's pass
    # The pass lapses every owner's holds past their end: other tests' holds in this database
    # may lapse with it (their events go to their own sandboxes).
    assert await LapseSimulatorHolds().run_once(runtime) >= 1
    assert [kind for kind, _ in (await _types(events, 4))[2:]] == [
        "charge.expired",
        "payment_intent.canceled",
    ]
    assert await LapseSimulatorHolds().run_once(runtime) == 0  # once
