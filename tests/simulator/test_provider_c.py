"""Simulated provider C (Stripe Checkout) over HTTP: sessions, the hosted page, refunds,
idempotency, keys kept apart, the public key, signed events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from payorch.providers.provider_c.registration import mock_credentials
from payorch.providers.provider_c.signature import verify
from payorch.runtime import Runtime
from payorch.simulator.provider_c.credentials import PUBLIC_SECRET_KEY
from tests.kit import Sandbox, new_application
from tests.simulator.provider_c_app import C, Events, c_app, c_headers, session_form

__all__ = ["c_app"]


@pytest.fixture
def http(c_app: tuple[httpx.AsyncClient, Events]) -> httpx.AsyncClient:
    return c_app[0]


@pytest.fixture
def events(c_app: tuple[httpx.AsyncClient, Events]) -> Events:
    return c_app[1]


async def create(http: httpx.AsyncClient, headers: dict[str, str], **form: str) -> dict[str, Any]:
    answer = await http.post(C + "/v1/checkout/sessions", data=session_form(**form), headers=headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def press(http: httpx.AsyncClient, session: dict[str, Any], outcome: str) -> httpx.Response:
    page = httpx.URL(session["url"]).path
    return await http.post(page, data={"outcome": outcome})


async def read(http: httpx.AsyncClient, headers: dict[str, str], session_id: str) -> dict[str, Any]:
    answer = await http.get(
        f"{C}/v1/checkout/sessions/{session_id}", params={"expand[]": "payment_intent"}, headers=headers
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def test_a_session_paid_on_its_page_reads_complete_and_paid(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    assert session["object"] == "checkout.session"
    assert (session["status"], session["payment_status"], session["payment_intent"]) == (
        "open",
        "unpaid",
        None,
    )
    assert session["amount_total"] == 15000 and session["currency"] == "clp"  # zero-decimal: pesos
    page = await http.get(httpx.URL(session["url"]).path)
    assert page.status_code == 200 and "$15.000" in page.text
    back = await press(http, session, "approve")
    assert back.status_code == 303
    assert back.headers["location"] == f"http://testserver/back?session_id={session['id']}"
    paid = await read(http, headers, session["id"])
    assert (paid["status"], paid["payment_status"]) == ("complete", "paid")
    assert paid["payment_intent"]["status"] == "succeeded"
    assert paid["payment_intent"]["amount_received"] == 15000


async def test_a_decline_keeps_the_session_open_for_another_try(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    declined = await press(http, session, "reject")
    assert declined.status_code == 200 and "declined" in declined.text
    after = await read(http, headers, session["id"])
    assert after["status"] == "open"
    assert after["payment_intent"]["status"] == "requires_payment_method"
    assert (await press(http, session, "approve")).status_code == 303
    assert (await read(http, headers, session["id"]))["payment_status"] == "paid"


async def test_cancel_goes_back_by_cancel_url_and_moves_nothing(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    back = await press(http, session, "cancel")
    assert back.status_code == 303 and back.headers["location"] == "http://testserver/back?cancelled=1"
    assert (await read(http, headers, session["id"]))["status"] == "open"


async def test_expire_stops_an_open_session_only(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    expired = await http.post(f"{C}/v1/checkout/sessions/{session['id']}/expire", headers=headers)
    assert expired.status_code == 200 and expired.json()["status"] == "expired"
    again = await http.post(f"{C}/v1/checkout/sessions/{session['id']}/expire", headers=headers)
    assert again.status_code == 400 and again.json()["error"]["type"] == "invalid_request_error"
    assert (await press(http, session, "approve")).status_code == 409  # nothing left to pay


async def test_pending_is_processing_until_settled(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    from payorch.simulator.provider_c.simulated import settle

    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers, client_reference_id="payi_pending")
    assert (await press(http, session, "pending")).status_code == 303
    read_back = await read(http, headers, session["id"])
    assert (read_back["status"], read_back["payment_status"]) == ("complete", "unpaid")
    assert read_back["payment_intent"]["status"] == "processing"
    async with runtime.database.transaction() as conn:
        moved = await settle(
            conn, runtime.clock, "http://testserver", sandbox.application_id, "payi_pending", "approve"
        )
    assert moved is not None
    assert (await read(http, headers, session["id"]))["payment_status"] == "paid"


async def test_refunds_part_then_the_rest_then_refuse_more(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    await press(http, session, "approve")
    intent = (await read(http, headers, session["id"]))["payment_intent"]["id"]
    part = await http.post(
        C + "/v1/refunds", data={"payment_intent": intent, "amount": "5000"}, headers=headers
    )
    assert part.status_code == 200 and part.json()["status"] == "succeeded" and part.json()["amount"] == 5000
    rest = await http.post(C + "/v1/refunds", data={"payment_intent": intent}, headers=headers)
    assert rest.json()["amount"] == 10000
    more = await http.post(C + "/v1/refunds", data={"payment_intent": intent, "amount": "1"}, headers=headers)
    assert more.status_code == 400 and more.json()["error"]["code"] == "amount_too_large"
    listed = await http.get(C + "/v1/refunds", params={"payment_intent": intent}, headers=headers)
    assert sorted(r["amount"] for r in listed.json()["data"]) == [5000, 10000]  # one clock instant
    got = await http.get(f"{C}/v1/refunds/{part.json()['id']}", headers=headers)
    assert got.json()["payment_intent"] == intent


async def test_an_idempotency_key_replays_the_first_answer_and_refuses_other_parameters(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = {**c_headers(runtime, sandbox.application_id), "Idempotency-Key": "k-1"}
    first = await http.post(C + "/v1/checkout/sessions", data=session_form(), headers=headers)
    second = await http.post(C + "/v1/checkout/sessions", data=session_form(), headers=headers)
    assert first.status_code == second.status_code == 200
    assert second.json()["id"] == first.json()["id"]
    assert second.headers.get("idempotent-replayed") == "true"
    other = await http.post(
        C + "/v1/checkout/sessions", data=session_form(client_reference_id="x"), headers=headers
    )
    assert other.status_code == 409 and other.json()["error"]["type"] == "idempotency_error"


async def test_each_key_sees_only_its_own_objects(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    mine = c_headers(runtime, sandbox.application_id)
    other = await new_application(runtime)
    session = await create(http, mine)
    theirs = await http.get(
        f"{C}/v1/checkout/sessions/{session['id']}", headers=c_headers(runtime, other.application_id)
    )
    assert theirs.status_code == 404 and theirs.json()["error"]["code"] == "resource_missing"
    public = await http.get(
        f"{C}/v1/checkout/sessions/{session['id']}", headers={"Authorization": f"Bearer {PUBLIC_SECRET_KEY}"}
    )
    assert public.status_code == 404
    forged = await http.get(
        f"{C}/v1/checkout/sessions/{session['id']}",
        headers={"Authorization": f"Bearer sk_test_{sandbox.application_id}_{'0' * 32}"},
    )
    assert forged.status_code == 401 and forged.json()["error"]["code"] == "api_key_invalid"


async def test_lists_sessions_by_payment_intent(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    await create(http, headers)
    await press(http, session, "approve")
    intent = (await read(http, headers, session["id"]))["payment_intent"]["id"]
    listed = await http.get(C + "/v1/checkout/sessions", params={"payment_intent": intent}, headers=headers)
    assert listed.json()["object"] == "list"
    assert [s["id"] for s in listed.json()["data"]] == [session["id"]]


@pytest.mark.parametrize(
    ("form", "param"),
    [
        ({"mode": "subscription"}, "mode"),
        ({"line_items[0][price_data][currency]": "zzz"}, "line_items[0][price_data][currency]"),
        ({"line_items[0][price_data][unit_amount]": "-5"}, "line_items[0][price_data][unit_amount]"),
        ({"expires_at": "1"}, "expires_at"),
        ({"success_url": ""}, None),
    ],
)
async def test_bad_requests_are_400_in_the_providers_shape_and_make_nothing(
    http: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, form: dict[str, str], param: str | None
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    body = session_form(**form)
    if param is None:
        del body["success_url"]
        param = "success_url"
    answer = await http.post(C + "/v1/checkout/sessions", data=body, headers=headers)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param
    listed = await http.get(C + "/v1/checkout/sessions", headers=headers)
    assert listed.json()["data"] == []


async def test_events_are_signed_with_the_keys_webhook_secret(
    http: httpx.AsyncClient, events: Events, runtime: Runtime, sandbox: Sandbox
) -> None:
    headers = c_headers(runtime, sandbox.application_id)
    session = await create(http, headers)
    await press(http, session, "approve")
    for _ in range(500):
        if events.received:
            break
        await asyncio.sleep(0.02)
    received_headers, body = events.received[0]
    secret = mock_credentials(runtime.cipher, sandbox.application_id)["webhook_secret"]
    verify(secret, received_headers, body, now=runtime.clock.now())
    event = json.loads(body)
    assert event["type"] == "checkout.session.completed"
    assert event["data"]["object"]["id"] == session["id"]
