"""Reconciliation of held payments (capture_method manual), through HTTP on SQLite and
PostgreSQL, at each provider that holds: a hold not captured, a hold captured in part and then
refunded in part, and a voided hold all reconcile clean. Provider A's status cannot tell a hold
from money taken (AUTHORIZED either way; CAPTURED's balance is what is left of the capture):
its reader takes the capture method and the captured amount from payorch's books, so a hold is
not counted paid and the released rest of a partial capture is not counted refunded."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from tests.kit import Sandbox, chosen_providers, mock_sandbox
from tests.providers.helpers import A, B, pay, read, start
from tests.reconciliation.helpers import C, reconcile


async def _held(client: httpx.AsyncClient, sandbox: Sandbox, provider: str) -> str:
    intent, body = await start(client, sandbox, provider, capture_method="manual")
    await pay(client, body, "approve")
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "REQUIRES_CAPTURE", read_back
    return str(read_back["payment"]["id"])


async def _post(client: httpx.AsyncClient, sandbox: Sandbox, path: str, body: dict[str, Any]) -> None:
    answer = await client.post(path, json=body, headers=sandbox.headers)
    assert answer.status_code in (200, 201), answer.text


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize(
    "provider",
    chosen_providers(
        A,
        C,
        left_out={
            B: "cannot hold (tests/conformance/test_holds.py)",
            PROVIDER_D: "no reconciliation reader (its holds: tests/conformance/test_holds.py)",
        },
    ),
)
async def test_holds_captures_and_voids_reconcile_clean(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    await _held(client, sandbox, provider)  # held, not captured
    captured = await _held(client, sandbox, provider)
    await _post(client, sandbox, f"/v1/payments/{captured}/capture", {"amount": 1000})
    await _post(client, sandbox, f"/v1/payments/{captured}/refunds", {"amount": 400})
    voided = await _held(client, sandbox, provider)
    await _post(client, sandbox, f"/v1/payments/{voided}/void", {})
    body = await reconcile(client, sandbox, runtime)
    assert body["findings"] == [], body["findings"]
