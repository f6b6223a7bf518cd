"""Helpers for the simulator tests: MOCK credential headers, a notification receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from starlette.responses import Response

from payorch.app import create_app
from payorch.runtime import Runtime
from payorch.simulator.credentials import mock_credentials
from tests.conftest import Sandbox

A_API = "/simulator/provider_a/rswebpaytransaction/api/webpay/v1.2/transactions"
A_PAGE = "/simulator/provider_a/webpayserver/initTransaction"
A_DECIDE = "/simulator/provider_a/webpayserver/decide"
B = "/simulator/provider_b"
B_PAGE = B + "/checkout/v1/redirect"
RETURN_A = "http://testserver/v1/checkout-returns/provider_a_redirect_post/"
RETURN_B = "http://testserver/v1/checkout-returns/provider_b_redirect_get/"
HOOK_PATH = "/test-hooks/provider-b"


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


@pytest.fixture
async def app_client(runtime: Runtime) -> AsyncIterator[tuple[httpx.AsyncClient, Receiver]]:
    receiver = Receiver()
    app = create_app(runtime=runtime)

    async def hook(request: Request) -> Response:
        receiver.received.append(
            {
                "query": dict(request.query_params),
                "headers": dict(request.headers),
                "body": await request.body(),
            }
        )
        if receiver.failures_left > 0:
            receiver.failures_left -= 1
            return Response(status_code=503)
        return Response(status_code=200)

    # The in-process calls of runtime.http (the simulator's notifications) go to the in-process
    # app of the first app built over the runtime (payorch.app.create_in_process_app).
    in_process = runtime.local_app.get()
    assert isinstance(in_process, FastAPI) and in_process is not app
    in_process.add_api_route(HOOK_PATH, hook, methods=["POST"])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as http:
        yield http, receiver


@pytest.fixture
async def sim(app_client: tuple[httpx.AsyncClient, Receiver]) -> httpx.AsyncClient:
    return app_client[0]


@pytest.fixture
def receiver(app_client: tuple[httpx.AsyncClient, Receiver]) -> Receiver:
    return app_client[1]


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
        "items": [
            {"id": "i1", "title": "Book", "quantity": 2, "unit_price": 750, "currency_id": "CLP"}
        ],
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


async def create_b(
    http: httpx.AsyncClient, headers: dict[str, str], **overrides: Any
) -> dict[str, Any]:
    answer = await http.post(
        B + "/checkout/preferences", json=preference_body(**overrides), headers=headers
    )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def pay_b(http: httpx.AsyncClient, preference_id: str, outcome: str) -> httpx.Response:
    return await http.post(B_PAGE, data={"pref_id": preference_id, "outcome": outcome})


def query_of(response: httpx.Response) -> dict[str, str]:
    return dict(httpx.URL(response.headers["location"]).params)


__all__ = ["Sandbox"]
