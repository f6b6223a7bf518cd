"""Simulated provider D over HTTP (SQLite and PostgreSQL): its Checkout API's answers, headers,
errors and replays, the hosted page's way back, session states, holds, and the signatures of
its notifications (the protocol's worked HMAC examples)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.http.routing import mount
from payorch.runtime import Runtime
from payorch.simulator.provider_d import endpoints, notify, repository
from payorch.simulator.provider_d.wire import PUBLIC_API_KEY, PUBLIC_HMAC_KEY, PUBLIC_MERCHANT_ACCOUNT

pytestmark = pytest.mark.settings(simulator_public_rate_limit="1000/minute")

API = "/simulator/provider_d/v71"
HOOK = "/test-hooks/provider-d"
KEY = {"X-API-Key": PUBLIC_API_KEY}
EXAMPLE_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"


@pytest.fixture
async def d(runtime: Runtime) -> AsyncIterator[tuple[httpx.AsyncClient, list[dict[str, Any]]]]:
    app = create_app(runtime=runtime)
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI)
    items: list[dict[str, Any]] = []

    async def hook(request: Request) -> Response:
        body = json.loads(await request.body())
        items.extend(wrapper["NotificationRequestItem"] for wrapper in body["notificationItems"])
        return Response("[accepted]")

    for served in (app, in_process):
        mount(served, endpoints.router)
    in_process.add_api_route(HOOK, hook, methods=["POST"])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as http:
        yield http, items


def _session(**extra: Any) -> dict[str, Any]:
    return {
        "merchantAccount": PUBLIC_MERCHANT_ACCOUNT,
        "amount": {"value": 1000, "currency": "EUR"},
        "reference": "payi_d1",
        "returnUrl": "http://testserver/shop/return?x=1",
        "metadata": {"payorch_notification_url": "http://testserver" + HOOK},
        **extra,
    }


async def _made(http: httpx.AsyncClient, **extra: Any) -> dict[str, Any]:
    answer = await http.post(API + "/sessions", json=_session(**extra), headers=KEY)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def _decided(
    http: httpx.AsyncClient, made: dict[str, Any], outcome: str, reason: str = "2"
) -> httpx.URL:
    back = await http.post(made["url"], data={"outcome": outcome, "reason": reason})
    assert back.status_code == 303, back.text
    return httpx.URL(back.headers["location"])


async def _result(http: httpx.AsyncClient, session_id: str, token: str) -> httpx.Response:
    return await http.get(f"{API}/sessions/{session_id}?sessionResult={token}", headers=KEY)


@pytest.mark.parametrize(
    ("key", "signing", "expected"),
    [
        (
            EXAMPLE_KEY,
            (
                "7914073381342284",
                "",
                "TestMerchant",
                "TestPayment-1407325143704",
                1130,
                "AUTHORISATION",
                "true",
            ),
            "coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=",
        ),
        (
            EXAMPLE_KEY,
            ("QFQTPCQ8HXSKGK82", "9913140798220028", "YOUR_MERCHANT_ACCOUNT", "YOUR_MERCHANT_REFERENCE", 1000)
            + ("CAPTURE", "true"),
            "gK+34hxg7wgkDXi9vdsfXwTVbHIukRakQO4PwNZyx2I=",
        ),
        (
            EXAMPLE_KEY,
            ("ZVWN7D3WSMK2WN83", "", "TestMerchant", "order-42", 2500, "AUTHORISATION", "false"),
            "cgCQfzFVo5FHeInldUEujDkGQJHYMEC4e4UKh50eUCk=",
        ),
        (
            "74F490DD33F7327BAECC88B2947C011FC02D014A473AAA33A8EC93E4DC069174",
            (
                "ZVWN7D3WSMK2WN82",
                "",
                "AntoniStroinski",
                "\\:/\\/slashes are fun",
                1000,
                "AUTHORISATION",
                "true",
            ),
            "CZErGCNQaSsxbaQfZaJlakqo7KPP+mIa8a+wx3yNs9A=",
        ),
    ],
)
def test_items_are_signed_as_the_protocol_worked_examples(
    key: str, signing: tuple[Any, ...], expected: str
) -> None:
    psp, original, merchant, reference, value, event, success = signing
    item = {"pspReference": psp, "merchantAccountCode": merchant, "merchantReference": reference}
    item |= {"amount": {"value": value, "currency": "EUR"}, "eventCode": event, "success": success}
    if original:
        item["originalReference"] = original
    assert notify.signature(item, key) == expected


async def test_the_api_key_is_read_in_any_case_and_a_stranger_gets_the_spec_401(d: Any) -> None:
    http, _ = d
    for header in ("x-api-key", "X-Api-Key", "X-API-KEY"):
        answer = await http.post(API + "/sessions", json=_session(), headers={header: PUBLIC_API_KEY})
        assert answer.status_code == 201
    for headers in ({}, {"X-API-Key": "AQE_wrong"}):
        refused = await http.post(API + "/sessions", json=_session(), headers=headers)
        assert refused.status_code == 401
        assert refused.json() == {
            "status": 401,
            "errorCode": "000",
            "message": "HTTP Status Response - Unauthorized",
            "errorType": "security",
        }


async def test_a_session_is_served_on_both_versions_and_layouts_with_its_headers(d: Any) -> None:
    http, _ = d
    for base in ("/simulator/provider_d/v72", "/simulator/provider_d/checkout/v71"):
        answer = await http.post(base + "/sessions", json=_session(mode="hosted"), headers=KEY)
        assert answer.status_code == 201
        assert answer.headers["content-type"] == "application/json;charset=UTF-8"
        assert len(answer.headers["pspReference"]) == 16
        body = answer.json()
        assert body["id"].startswith("CS") and len(body["id"]) == 18 and body["mode"] == "hosted"
        assert body["url"] == f"http://testserver/simulator/provider_d/checkoutshopper/{body['id']}"
        assert body["reference"] == "payi_d1" and body["amount"] == {"value": 1000, "currency": "EUR"}
    assert (
        await http.post("/simulator/provider_d/v70/sessions", json=_session(), headers=KEY)
    ).status_code == 404


async def test_a_key_replays_the_first_answer_and_refuses_another_request(d: Any) -> None:
    http, _ = d
    keyed = {**KEY, "Idempotency-Key": "sess-1"}
    first = await http.post(API + "/sessions", json=_session(), headers=keyed)
    again = await http.post(API + "/sessions", json=_session(), headers=keyed)
    assert first.status_code == again.status_code == 201 and first.json() == again.json()
    assert again.headers["Idempotency-Key"] == "sess-1"
    other = await http.post(API + "/sessions", json=_session(reference="other"), headers=keyed)
    assert other.status_code == 409 and other.json()["errorCode"] == "704"


@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"merchantAccount": "Other"}, 403, "901"),
        ({"reference": ""}, 422, "130"),
        ({"returnUrl": "shop.example.com/return"}, 422, "14_030"),
        ({"amount": {"value": 10, "currency": "eur"}}, 422, "138"),
        ({"expiresAt": "2999-01-01T00:00:00+00:00"}, 422, "100"),
    ],
)
async def test_bad_sessions_are_service_errors(
    d: Any, change: dict[str, Any], status: int, code: str
) -> None:
    http, _ = d
    answer = await http.post(API + "/sessions", json=_session(**change), headers=KEY)
    assert (answer.status_code, answer.json()["errorCode"]) == (status, code)
    assert answer.json()["pspReference"] == answer.headers["pspReference"]
    bad = await http.post(API + "/sessions", content=b"{", headers=KEY)
    assert (bad.status_code, bad.json()["errorCode"]) == (400, "702")


async def test_the_session_result_is_read_encoded_or_raw_and_only_with_its_token(d: Any) -> None:
    http, items = d
    made = await _made(http)
    back = await _decided(http, made, "approve")
    assert back.params["sessionId"] == made["id"] and str(back).startswith(
        "http://testserver/shop/return?x=1&"
    )
    token = back.params["sessionResult"]
    assert token.endswith("!") and "+" not in token
    for presented in (token, quote(token, safe="")):
        answer = await _result(http, made["id"], presented)
        assert answer.status_code == 200 and answer.json()["status"] == "completed"
    [payment] = answer.json()["payments"]
    assert payment["resultCode"] == "Authorised" and payment["amount"] == {"value": 1000, "currency": "EUR"}
    assert [(i["eventCode"], i["success"]) for i in items] == [("AUTHORISATION", "true"), ("CAPTURE", "true")]
    assert items[1]["originalReference"] == payment["pspReference"] == items[0]["pspReference"]
    assert items[0]["additionalData"]["hmacSignature"] == notify.signature(items[0], PUBLIC_HMAC_KEY)
    assert (await _result(http, made["id"], "X3Xwrong")).json()["errorCode"] == "701"
    missing = await http.get(f"{API}/sessions/{made['id']}", headers=KEY)
    assert missing.status_code == 422
    assert (await http.get(made["url"])).status_code == 409  # nothing left to pay


async def test_refusals_come_back_and_leave_the_session_active_until_the_third(d: Any) -> None:
    http, items = d
    made = await _made(http)
    for attempt, status in ((1, "active"), (2, "active"), (3, "refused")):
        back = await _decided(http, made, "reject", "24")
        result = await _result(http, made["id"], back.params["sessionResult"])
        assert result.json()["status"] == status and result.json()["payments"] == []
        assert (
            len(items) == attempt
            and items[-1]["success"] == "false"
            and items[-1]["reason"] == "CVC Declined"
        )
    page_now = await http.get(made["url"])
    assert page_now.status_code == 409 and "Too many refused attempts" in page_now.text


async def test_a_cancel_comes_back_and_an_unpaid_session_expires(d: Any, clock: FrozenClock) -> None:
    http, items = d
    cancelled = await _made(http)
    back = await _decided(http, cancelled, "cancel")
    assert (await _result(http, cancelled["id"], back.params["sessionResult"])).json()["status"] == "canceled"
    lapsing = await _made(http)
    clock.advance(3601)
    assert (await http.get(lapsing["url"])).status_code == 409
    after = await http.post(lapsing["url"], data={"outcome": "approve"})
    assert after.status_code == 409 and items == []


async def test_a_hold_is_captured_in_part_once_and_lapses_after_its_window(
    d: Any, runtime: Runtime, clock: FrozenClock
) -> None:
    http, items = d
    made = await _made(http, additionalData={"manualCapture": "true"})
    await _decided(http, made, "approve")
    psp = items[0]["pspReference"]
    pay = f"{API}/payments/{psp}"
    body = {"merchantAccount": PUBLIC_MERCHANT_ACCOUNT, "amount": {"value": 400, "currency": "EUR"}}
    refund = await http.post(pay + "/refunds", json=body, headers=KEY)
    capture = await http.post(pay + "/captures", json=body, headers=KEY)
    twice = await http.post(pay + "/captures", json=body, headers=KEY)
    assert refund.status_code == capture.status_code == twice.status_code == 201
    assert capture.json()["pspReference"] == capture.headers["pspReference"]
    assert [(i["eventCode"], i["success"]) for i in items[1:]] == [
        ("REFUND", "false"),
        ("CAPTURE", "true"),
        ("CAPTURE", "false"),
    ]
    async with runtime.phases.reading() as conn:
        taken = await repository.session_of(conn, made["id"], owner="public")
    assert taken is not None and (taken.payment, taken.captured, taken.held) == ("captured", 400, 0)

    other = await _made(http, additionalData={"manualCapture": "true"})
    await _decided(http, other, "approve")
    held = items[-1]["pspReference"]
    clock.advance(7 * 86400)
    late = await http.post(f"{API}/payments/{held}/captures", json=body, headers=KEY)
    assert late.status_code == 201
    assert [(i["eventCode"], i["success"]) for i in items[-2:]] == [("EXPIRE", "true"), ("CAPTURE", "false")]
    assert items[-2]["pspReference"] == held and items[-2]["amount"]["value"] == 1000
