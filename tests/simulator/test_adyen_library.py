"""Adyen's official Python library (``adyen`` 16), unchanged, against simulated provider D on a
live server: every call payorch's protocol uses, pointed at the simulator through each
service's ``baseUrl`` with the published test key (docs/simulator.md), and the notifications the
simulator sends checked with the library's own ``Adyen.util.is_valid_hmac_notification``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import Adyen
import httpx
import orjson
import pytest
from Adyen.exceptions import (
    AdyenAPIAuthenticationError,
    AdyenAPIInvalidPermission,
    AdyenAPIUnprocessableEntity,
)
from fastapi import APIRouter

from payorch.simulator.provider_d import endpoints
from tests.simulator.helpers import hooked_server

pytestmark = pytest.mark.slow

SECRET = "adyen-test-secret-key-0123456789abcdefghij"  # noqa: S105 - a test key
# The published test credentials (docs/simulator.md).
API_KEY = "AQE_payorch_sandbox_public_key"
MERCHANT = "PayorchSandboxECOM"
HMAC_KEY = "7061796F7263682D73616E64626F782D7075626C69632D686D61632D6B657921"
HOOK_PATH = "/test-hooks/adyen-notifications"
RECEIVED: list[dict[str, Any]] = []  # the notification items, as sent


@dataclass(frozen=True)
class _Served:
    name: str = "provider_d"
    routers: tuple[APIRouter, ...] = (endpoints.router,)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    with hooked_server(tmp_path_factory.mktemp("adyen"), SECRET, HOOK_PATH, _Served()) as served:
        served.received = _Items()
        library = Adyen.Adyen(xapikey=API_KEY, platform="test")
        base = served.url + "/simulator/provider_d/v72"
        library.checkout.payments_api.baseUrl = base
        library.checkout.modifications_api.baseUrl = base
        yield served.url, library.checkout


class _Items(list[tuple[dict[str, str], bytes]]):
    """The hook's record: each POSTed body's items into RECEIVED."""

    def append(self, posted: tuple[dict[str, str], bytes]) -> None:
        body = orjson.loads(posted[1])
        assert body["live"] == "false"
        RECEIVED.extend(wrapper["NotificationRequestItem"] for wrapper in body["notificationItems"])


def _notified(event: str, psp: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        found = [
            i
            for i in RECEIVED
            if i["eventCode"] == event and psp in (i["pspReference"], i.get("originalReference"))
        ]
        if found:
            item = found[-1]
            assert Adyen.util.is_valid_hmac_notification(item, HMAC_KEY) is True
            return item
        assert time.monotonic() < deadline, f"no {event} about {psp}"
        time.sleep(0.05)


def _paid(server: str, co: Any, outcome: str = "approve", **extra: Any) -> tuple[str, str, str]:
    """A session made with the library, decided on the hosted page: its id, its sessionResult and
    the payment's pspReference from the session's result."""
    made = co.payments_api.sessions(
        {
            "merchantAccount": MERCHANT,
            "amount": {"value": 1000, "currency": "EUR"},
            "reference": "order-1001",
            "returnUrl": server + "/shop/return?order=1001",
            "mode": "hosted",
            "metadata": {"payorch_notification_url": server + HOOK_PATH},
            **extra,
        },
        idempotency_key=None,
    )
    assert made.status_code == 201 and len(made.psp) == 16
    session = made.message
    assert (
        session["id"].startswith("CS")
        and session["mode"] == "hosted"
        and session["reference"] == "order-1001"
    )
    with httpx.Client() as browser:
        assert browser.get(session["url"]).status_code == 200
        back = browser.post(session["url"], data={"outcome": outcome, "reason": "12"})
    assert back.status_code == 303
    location = httpx.URL(back.headers["location"])
    assert str(location).startswith(server + "/shop/return?order=1001&sessionId=")
    token = location.params["sessionResult"]
    assert location.params["sessionId"] == session["id"] and "+" not in token
    result = co.payments_api.get_result_of_payment_session(
        session["id"], query_parameters={"sessionResult": quote(token, safe="")}
    ).message
    payments = result["payments"]
    return session["id"], token, payments[0]["pspReference"] if payments else ""


def test_a_session_paid_then_captured_in_part_refunded_and_reversed(checkout: tuple[str, Any]) -> None:
    server, co = checkout
    session_id, token, psp = _paid(server, co, additionalData={"manualCapture": "true"})
    raw = co.payments_api.get_result_of_payment_session(session_id, query_parameters={"sessionResult": token})
    assert raw.message["status"] == "completed" and raw.message["payments"][0]["resultCode"] == "Authorised"
    authorised = _notified("AUTHORISATION", psp)
    assert authorised["success"] == "true" and authorised["additionalData"]["checkoutSessionId"] == session_id
    assert "originalReference" not in authorised and authorised["merchantReference"] == "order-1001"

    body = {"merchantAccount": MERCHANT, "amount": {"value": 600, "currency": "EUR"}, "reference": "cap-1"}
    capture = co.modifications_api.capture_authorised_payment(body, psp, idempotency_key="cap-1")
    again = co.modifications_api.capture_authorised_payment(body, psp, idempotency_key="cap-1")
    assert capture.status_code == 201 and capture.message["status"] == "received"
    assert capture.message["paymentPspReference"] == psp and capture.psp == capture.message["pspReference"]
    assert again.message == capture.message  # the first answer again
    captured = _notified("CAPTURE", psp)
    assert (captured["success"], captured["amount"]["value"], captured["originalReference"]) == (
        "true",
        600,
        psp,
    )

    refund = co.modifications_api.refund_captured_payment(
        {"merchantAccount": MERCHANT, "amount": {"value": 200, "currency": "EUR"}}, psp
    )
    assert refund.status_code == 201
    assert _notified("REFUND", refund.message["pspReference"])["success"] == "true"
    over = co.modifications_api.refund_captured_payment(
        {"merchantAccount": MERCHANT, "amount": {"value": 500, "currency": "EUR"}}, psp
    )
    refused = _notified("REFUND", over.message["pspReference"])
    assert refused["success"] == "false" and refused["reason"]

    reversal = co.modifications_api.refund_or_cancel_payment({"merchantAccount": MERCHANT}, psp)
    reversed_ = _notified("CANCEL_OR_REFUND", reversal.message["pspReference"])
    assert reversed_["success"] == "true" and reversed_["additionalData"]["modification.action"] == "refund"
    assert reversed_["amount"]["value"] == 400


def test_a_held_payment_cancelled_and_an_automatic_one_captured(checkout: tuple[str, Any]) -> None:
    server, co = checkout
    _, _, held = _paid(server, co, additionalData={"manualCapture": "true"})
    cancel = co.modifications_api.cancel_authorised_payment_by_psp_reference(
        {"merchantAccount": MERCHANT}, held
    )
    assert cancel.status_code == 201 and "amount" not in cancel.message
    assert _notified("CANCELLATION", cancel.message["pspReference"])["success"] == "true"

    _, _, taken = _paid(server, co)
    assert _notified("CAPTURE", taken)["success"] == "true"  # captured right after the authorisation


def test_a_refusal_comes_back_with_the_session_still_active(checkout: tuple[str, Any]) -> None:
    server, co = checkout
    session_id, token, psp = _paid(server, co, outcome="reject")
    assert psp == ""  # only authorised payments are listed
    result = co.payments_api.get_result_of_payment_session(
        session_id, query_parameters={"sessionResult": token}
    )
    assert result.message["status"] == "active"
    refused = [i for i in RECEIVED if i["additionalData"].get("checkoutSessionId") == session_id]
    deadline = time.monotonic() + 10
    while not refused:
        assert time.monotonic() < deadline
        time.sleep(0.05)
        refused = [i for i in RECEIVED if i["additionalData"].get("checkoutSessionId") == session_id]
    assert Adyen.util.is_valid_hmac_notification(refused[0], HMAC_KEY) is True
    assert (refused[0]["eventCode"], refused[0]["success"], refused[0]["reason"]) == (
        "AUTHORISATION",
        "false",
        "Not enough balance",
    )
    assert refused[0]["additionalData"]["refusalReasonCode"] == "12"


def test_errors_are_the_library_exceptions_with_the_header_psp(checkout: tuple[str, Any]) -> None:
    server, co = checkout
    _, _, psp = _paid(server, co, additionalData={"manualCapture": "true"})
    with pytest.raises(AdyenAPIInvalidPermission) as forbidden:
        co.modifications_api.capture_authorised_payment(
            {"merchantAccount": "SomeoneElse", "amount": {"value": 1000, "currency": "EUR"}}, psp
        )
    assert (forbidden.value.status_code, forbidden.value.error_code) == (403, "901")
    assert forbidden.value.psp and len(forbidden.value.psp) == 16
    with pytest.raises(AdyenAPIUnprocessableEntity) as unknown:
        co.modifications_api.capture_authorised_payment(
            {"merchantAccount": MERCHANT, "amount": {"value": 1000, "currency": "EUR"}}, "ABCDEFGHIJKLMNOP"
        )
    assert unknown.value.error_code == "167" and unknown.value.psp
    with pytest.raises(AdyenAPIUnprocessableEntity) as missing:
        co.payments_api.sessions(
            {
                "merchantAccount": MERCHANT,
                "amount": {"value": 1000, "currency": "EUR"},
                "returnUrl": server + "/shop",
            }
        )
    assert missing.value.error_code == "130"
    stranger = Adyen.Adyen(xapikey="AQE_not_a_key", platform="test").checkout
    stranger.payments_api.baseUrl = server + "/simulator/provider_d/checkout/v71"
    with pytest.raises(AdyenAPIAuthenticationError) as unauthorised:
        stranger.payments_api.sessions({"merchantAccount": MERCHANT})
    assert unauthorised.value.error_code == "000"


def test_the_docs_print_the_public_credentials() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "simulator.md").read_text()
    assert all(value in text for value in (API_KEY, MERCHANT, HMAC_KEY))
