"""Provider A's connector says how its commerce code captures (its `capture` setting beside its
credentials, docs/providers.md "Holding and capturing"), through HTTP on SQLite and PostgreSQL:
a SANDBOX connector that captures at once is skipped by routing for a manual intent (saying why)
and refused when named (422 CAPTURE_METHOD_NOT_SUPPORTED); one configured for deferred capture
holds, against the simulator with the provider's deferred integration code, and takes no
automatic intent; a bad setting is a 400 naming the field, nothing created."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.providers.base import Mode
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime
from payorch.simulator.provider_a.credentials import (
    PUBLIC_A_API_KEY,
    PUBLIC_A_COMMERCE_CODE,
    PUBLIC_A_DEFERRED_COMMERCE_CODE,
)
from tests.kit import Sandbox, assert_error, new_application
from tests.providers.helpers import A, checkout, create_intent, pay, read
from tests.routing.helpers import C

IMMEDIATE = {"commerce_code": PUBLIC_A_COMMERCE_CODE, "api_key": PUBLIC_A_API_KEY}
DEFERRED = {
    "commerce_code": PUBLIC_A_DEFERRED_COMMERCE_CODE,
    "api_key": PUBLIC_A_API_KEY,
    "capture": "deferred",
}


def _connectors(sandbox: Sandbox) -> str:
    return f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"


async def _connector(client: httpx.AsyncClient, sandbox: Sandbox, **body: Any) -> httpx.Response:
    return await client.post(_connectors(sandbox), json=body, headers=sandbox.headers)


async def _sandbox(client: httpx.AsyncClient, runtime: Runtime, a_credentials: dict[str, str]) -> Sandbox:
    """A SANDBOX connector of A (priority 1) and a MOCK one of C (priority 2)."""
    sandbox = await new_application(runtime)
    made = await _connector(
        client, sandbox, provider=A, mode="SANDBOX", priority=1, credentials=a_credentials
    )
    assert made.status_code == 201, made.text
    made = await _connector(client, sandbox, provider=C, mode="MOCK", priority=2)
    assert made.status_code == 201, made.text
    return sandbox


@pytest.fixture
def a_at_the_simulator(monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    """A's SANDBOX base URL is the simulator's (it knows the provider's integration codes)."""
    adapter = registration_of(A).adapter
    simulator = adapter.base_url(Mode.MOCK, runtime.settings.public_url)
    monkeypatch.setattr(adapter, "provider_urls", {Mode.SANDBOX: simulator, Mode.PRODUCTION: simulator})


async def test_a_bad_capture_setting_is_refused_naming_the_field(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await new_application(runtime)
    refused = await _connector(
        client, sandbox, provider=A, mode="SANDBOX", credentials={**IMMEDIATE, "capture": "later"}
    )
    error = assert_error(refused, 400, "VALIDATION_ERROR")
    assert error["details"]["errors"][0]["field"] == "credentials.capture", error
    assert "immediate" in error["message"] and "deferred" in error["message"], error
    listed = await client.get(_connectors(sandbox), headers=sandbox.headers)
    assert listed.json()["items"] == []
    missing = await _connector(
        client, sandbox, provider=A, mode="SANDBOX", credentials={"capture": "deferred"}
    )
    assert assert_error(missing, 400, "VALIDATION_ERROR")["details"]["errors"][0]["field"] == (
        "credentials.commerce_code"
    )


async def test_a_connector_that_captures_at_once_takes_no_manual_intent(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await _sandbox(client, runtime, IMMEDIATE)
    intent = await create_intent(client, sandbox, currency="CLP", capture_method="manual")
    named = await checkout(client, sandbox, intent["id"], A)
    error = assert_error(named, 422, "CAPTURE_METHOD_NOT_SUPPORTED")
    assert "captures every approved payment at once" in error["message"], error
    assert error["details"]["capture_method"] == "manual"
    assert (await read(client, sandbox, intent["id"]))["status"] == "CREATED"  # nothing moved

    routed = await checkout(client, sandbox, intent["id"])
    assert routed.status_code == 200, routed.text
    body = routed.json()
    assert body["provider"] == C
    [skipped] = body["routing"]["skipped"]
    assert (skipped["provider"], skipped["reason"]) == (A, "capture_method"), skipped
    assert "at once" in skipped["detail"], skipped


@pytest.mark.usefixtures("a_at_the_simulator")
async def test_a_connector_configured_for_deferred_capture_holds_and_takes_no_automatic_intent(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await _sandbox(client, runtime, DEFERRED)
    intent = await create_intent(client, sandbox, currency="CLP", amount=1500, capture_method="manual")
    started = await checkout(client, sandbox, intent["id"])
    assert started.status_code == 200, started.text
    assert started.json()["provider"] == A and started.json()["routing"]["skipped"] == []
    await pay(client, started.json(), "approve")
    held = await read(client, sandbox, intent["id"])
    assert held["status"] == "REQUIRES_CAPTURE", held
    payment_id = held["payment"]["id"]
    captured = await client.post(
        f"/v1/payments/{payment_id}/capture", json={"amount": 1000}, headers=sandbox.headers
    )
    assert captured.status_code == 200, captured.text
    assert (captured.json()["status"], captured.json()["amount_captured"]) == ("AUTHORIZED", 1000)

    automatic = await create_intent(client, sandbox, currency="CLP")
    named = await checkout(client, sandbox, automatic["id"], A)
    error = assert_error(named, 422, "CAPTURE_METHOD_NOT_SUPPORTED")
    assert "holds every approved payment" in error["message"], error
    routed = await checkout(client, sandbox, automatic["id"])
    assert routed.status_code == 200 and routed.json()["provider"] == C, routed.text
    assert [(s["provider"], s["reason"]) for s in routed.json()["routing"]["skipped"]] == [
        (A, "capture_method")
    ]
