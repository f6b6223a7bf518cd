"""Provider C's own control through HTTP: its signed events about an intent's sessions, sent
again on request (duplicates, newest first); SANDBOX only. SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json

import httpx

from payorch.providers.provider_c.registration import mock_credentials
from payorch.providers.provider_c.signature import verify
from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application
from tests.simulator.provider_c_app import C, Events, c_app, c_headers, session_form

__all__ = ["c_app"]

SEND_AGAIN = "/simulator/controls/provider_c/events"


async def received(events: Events, count: int) -> list[dict[str, object]]:
    for _ in range(500):
        if len(events.received) >= count:
            break
        await asyncio.sleep(0.02)
    return [json.loads(body) for _, body in events.received]


async def paid_session(http: httpx.AsyncClient, headers: dict[str, str], reference: str) -> None:
    created = await http.post(C + "/v1/checkout/sessions", data=session_form(reference), headers=headers)
    assert created.status_code == 200, created.text
    assert (
        await http.post(httpx.URL(created.json()["url"]).path, data={"outcome": "approve"})
    ).status_code == 303


async def test_events_are_sent_again_signed_duplicated_and_newest_first(
    c_app: tuple[httpx.AsyncClient, Events], runtime: Runtime, sandbox: Sandbox
) -> None:
    http, events = c_app
    await paid_session(http, c_headers(runtime, sandbox.application_id), "payi_again")
    [first] = await received(events, 1)
    answer = await http.post(
        SEND_AGAIN,
        json={"payment_intent_id": "payi_again", "copies": 2, "order": "newest_first"},
        headers=sandbox.headers,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"payment_intent_id": "payi_again", "events": 2, "event_ids": [first["id"]] * 2}
    bodies = await received(events, 3)
    assert [b["id"] for b in bodies] == [first["id"]] * 3  # the same event, as the provider retries
    secret = mock_credentials(runtime.cipher, sandbox.application_id)["webhook_secret"]
    for headers, body in events.received:
        verify(secret, headers, body, now=runtime.clock.now())  # each signed afresh
    # Asked again: still one event (its earlier re-deliveries are not events of their own).
    once = await http.post(SEND_AGAIN, json={"payment_intent_id": "payi_again"}, headers=sandbox.headers)
    assert once.json()["event_ids"] == [first["id"]]


async def test_nothing_sent_is_a_404_and_bad_input_a_400(
    c_app: tuple[httpx.AsyncClient, Events], runtime: Runtime, sandbox: Sandbox
) -> None:
    http, events = c_app
    nothing = await http.post(SEND_AGAIN, json={"payment_intent_id": "payi_none"}, headers=sandbox.headers)
    assert nothing.status_code == 404 and nothing.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    for body in ({"payment_intent_id": "payi_x", "copies": 6}, {"payment_intent_id": "payi_x", "order": "x"}):
        refused = await http.post(SEND_AGAIN, json=body, headers=sandbox.headers)
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "VALIDATION_ERROR"
    assert events.received == []


async def test_another_application_sends_nothing_of_this_ones(
    c_app: tuple[httpx.AsyncClient, Events], runtime: Runtime, sandbox: Sandbox
) -> None:
    http, events = c_app
    await paid_session(http, c_headers(runtime, sandbox.application_id), "payi_mine")
    await received(events, 1)
    other = await new_application(runtime)
    answer = await http.post(SEND_AGAIN, json={"payment_intent_id": "payi_mine"}, headers=other.headers)
    assert answer.status_code == 404
    assert len(events.received) == 1
