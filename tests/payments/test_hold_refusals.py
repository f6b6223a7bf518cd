"""The API refuses what a provider does not declare for its holds (HoldSupport in its
registration, docs/providers.md "Holding and capturing"), through HTTP on SQLite and PostgreSQL:
provider C planted with a declaration of no partial capture and no void holds a payment; a
partial capture is 422 CAPTURE_AMOUNT_EXCEEDED saying it captures only the whole hold, a void is
409 INVALID_STATE saying it lapses instead, and neither moves the payment nor the provider's
money. The whole capture then works once; a second capture (one declared) is 409 INVALID_STATE."""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

import httpx
import pytest

from payorch.providers import registry
from payorch.providers.registration import HoldSupport
from payorch.runtime import Runtime
from payorch.simulator.conformance import ConformanceDriver, Money, Visit
from tests.kit import Sandbox, assert_error, mock_sandbox
from tests.providers.helpers import pay, read, start

C = "provider_c_redirect_get"
AMOUNT = 1500


@pytest.fixture
def whole_captures_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider C declaring one whole capture and no void (this module only)."""
    declared = HoldSupport(partial_capture=False, max_captures=1, void=False, window_days=7)
    monkeypatch.setitem(registry._BY_ID, C, dataclasses.replace(registry.registration_of(C), holds=declared))


def _driver() -> ConformanceDriver:
    simulator = registry.registration_of(C).simulator_name
    found: ConformanceDriver = importlib.import_module(f"payorch.simulator.{simulator}.conformance").DRIVER
    return found


async def _payment(client: httpx.AsyncClient, sandbox: Sandbox, payment_id: str) -> dict[str, Any]:
    answer = await client.get(f"/v1/payments/{payment_id}", headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def _move(
    client: httpx.AsyncClient, sandbox: Sandbox, payment_id: str, action: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.post(f"/v1/payments/{payment_id}/{action}", json=body, headers=sandbox.headers)


@pytest.mark.slow  # a payment at the simulator: a second or more
@pytest.mark.usefixtures("whole_captures_only")
async def test_what_the_provider_does_not_declare_is_refused_and_moves_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, C, amount=AMOUNT, capture_method="manual")
    await pay(client, body, "approve")
    held = await read(client, sandbox, intent["id"])
    assert held["status"] == "REQUIRES_CAPTURE", held
    payment_id = held["payment"]["id"]
    before = await _payment(client, sandbox, payment_id)
    action = body["checkout"]
    visit = Visit(sandbox.application_id, intent["id"], action["url"], {}, None, "manual")

    partial = assert_error(
        await _move(client, sandbox, payment_id, "capture", {"amount": 1000}), 422, "CAPTURE_AMOUNT_EXCEEDED"
    )
    assert "only the whole hold" in partial["message"] and C in partial["message"], partial
    assert partial["details"]["amount_capturable"] == AMOUNT
    void = assert_error(await _move(client, sandbox, payment_id, "void", {}), 409, "INVALID_STATE")
    assert "cannot release a hold on request" in void["message"], void
    assert await _payment(client, sandbox, payment_id) == before  # nothing moved, nothing in flight
    assert await _driver().money(client, runtime.cipher, visit) == Money(held=AMOUNT, taken=0)

    whole = await _move(client, sandbox, payment_id, "capture", {})
    assert whole.status_code == 200, whole.text
    assert (whole.json()["status"], whole.json()["amount_captured"]) == ("AUTHORIZED", AMOUNT)
    again = assert_error(await _move(client, sandbox, payment_id, "capture", {}), 409, "INVALID_STATE")
    assert again["details"]["allowed_statuses"] == ["REQUIRES_CAPTURE"], again
    assert await _driver().money(client, runtime.cipher, visit) == Money(held=0, taken=AMOUNT)
