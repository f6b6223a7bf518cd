"""Helpers of the simulator tests: its paths, MOCK credential headers, a notification receiver
record, and the steps of a buyer at the simulated pages."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import Any

import httpx

from payorch.runtime import Runtime
from payorch.simulator.credentials import mock_credentials

A_API = "/simulator/provider_a/rswebpaytransaction/api/webpay/v1.2/transactions"
A_PAGE = "/simulator/provider_a/webpayserver/initTransaction"
A_DECIDE = "/simulator/provider_a/webpayserver/decide"
B = "/simulator/provider_b"
B_PAGE = B + "/checkout/v1/redirect"
RETURN_A = "http://testserver/v1/checkout-returns/provider_a_redirect_post/"
RETURN_B = "http://testserver/v1/checkout-returns/provider_b_redirect_get/"
HOOK_PATH = "/test-hooks/provider-b"


def free_port() -> int:
    """A TCP port free on loopback now (for a server the test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def a_headers(runtime: Runtime, application_id: str) -> dict[str, str]:
    creds = mock_credentials(runtime.cipher, "provider_a", application_id)
    return {"Tbk-Api-Key-Id": creds["commerce_code"], "Tbk-Api-Key-Secret": creds["api_key"]}


def b_headers(runtime: Runtime, application_id: str) -> dict[str, str]:
    token = mock_credentials(runtime.cipher, "provider_b", application_id)["access_token"]
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Receiver:
    """Stands in for the service's provider-notification endpoint (same origin as PUBLIC_URL)."""

    received: list[dict[str, Any]] = field(default_factory=list)
    failures_left: int = 0

    url = "http://testserver" + HOOK_PATH


async def create_a(
    http: httpx.AsyncClient, headers: dict[str, str], intent_id: str = "payi_test", **overrides: Any
) -> str:
    body = {
        "buy_order": "order-1",
        "session_id": "session-1",
        "amount": 1500,
        "return_url": RETURN_A + intent_id,
    }
    body.update(overrides)
    answer = await http.post(A_API, json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


async def decide_a(http: httpx.AsyncClient, token: str, outcome: str) -> httpx.Response:
    return await http.post(A_DECIDE, data={"token_ws": token, "outcome": outcome})


def preference_body(reference: str = "payi_test", **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "items": [{"id": "i1", "title": "Book", "quantity": 2, "unit_price": 750, "currency_id": "CLP"}],
        "back_urls": {
            "success": RETURN_B + reference,
            "failure": RETURN_B + reference + "?leg=failure",
            "pending": RETURN_B + reference + "?leg=pending",
        },
        "auto_return": "all",
        "external_reference": reference,
        "notification_url": Receiver.url,
    }
    body.update(overrides)
    return body


async def create_b(http: httpx.AsyncClient, headers: dict[str, str], **overrides: Any) -> dict[str, Any]:
    answer = await http.post(B + "/checkout/preferences", json=preference_body(**overrides), headers=headers)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def pay_b(http: httpx.AsyncClient, preference_id: str, outcome: str) -> httpx.Response:
    return await http.post(B_PAGE, data={"pref_id": preference_id, "outcome": outcome})


def query_of(response: httpx.Response) -> dict[str, str]:
    return dict(httpx.URL(response.headers["location"]).params)
