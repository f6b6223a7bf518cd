"""Exports and reconciliation count captured money, not holds, through HTTP on SQLite and
PostgreSQL at each provider that holds: one payment captured at once, a hold captured in part and
refunded in part, a hold voided, a hold still held and one the provider let lapse. The balances
export's `authorized` (money taken) less `refunded` is what the provider's own books show taken,
its `held` what payorch holds; the reconciliation report matches the captured amounts, with no
finding; the payments export carries each payment's capture fields as the API shows them."""

from __future__ import annotations

import importlib
import json
from datetime import datetime, time, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime
from payorch.simulator.conformance import ConformanceDriver, Money, Visit
from tests.kit import Sandbox, chosen_providers, mock_sandbox
from tests.providers.helpers import A, B, pay, read, start
from tests.reconciliation.helpers import C, of_provider, reconcile

pytestmark = pytest.mark.slow  # payments at the simulator: seconds

AMOUNT = 1500
WINDOW_SECONDS = 8 * 86400  # past either provider's 7-day window


def driver(provider: str) -> ConformanceDriver:
    module = importlib.import_module(
        f"payorch.simulator.{registration_of(provider).simulator_name}.conformance"
    )
    found: ConformanceDriver = module.DRIVER
    return found


async def _paid(
    client: httpx.AsyncClient, sandbox: Sandbox, provider: str, capture_method: str
) -> tuple[Visit, dict[str, Any]]:
    """Paid on the provider's page: the visit (for the provider's books) and payorch's payment."""
    intent, body = await start(client, sandbox, provider, amount=AMOUNT, capture_method=capture_method)
    await pay(client, body, "approve")
    after = await read(client, sandbox, intent["id"])
    want = "REQUIRES_CAPTURE" if capture_method == "manual" else "AUTHORIZED"
    assert after["status"] == want, after
    action = body["checkout"]
    visit = Visit(
        sandbox.application_id,
        intent["id"],
        action["url"],
        dict(action["fields"] or {}),
        None,
        capture_method,
    )
    return visit, dict(after["payment"])


async def _post(client: httpx.AsyncClient, sandbox: Sandbox, path: str, body: dict[str, Any]) -> None:
    answer = await client.post(path, json=body, headers=sandbox.headers)
    assert answer.status_code in (200, 201), answer.text


async def _export(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, kind: str
) -> list[dict[str, Any]]:
    start = datetime.combine(runtime.clock.now().date(), time(0), runtime.clock.now().tzinfo)
    window = f"from={quote(start.isoformat())}&to={quote((start + timedelta(days=1)).isoformat())}"
    answer = await client.get(f"/v1/exports/{kind}?{window}&format=jsonl", headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    return [json.loads(line) for line in answer.text.splitlines()]


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
async def test_exports_and_reconciliation_count_captured_money_not_holds(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    lapsing, _ = await _paid(client, sandbox, provider, "manual")
    clock = await client.post(
        "/simulator/controls/clock",
        json={"advance_seconds": WINDOW_SECONDS, "provider": provider},
        headers=sandbox.headers,
    )
    assert clock.status_code == 200, clock.text  # the provider let it lapse: nothing taken
    visits = [lapsing]
    at_once, _ = await _paid(client, sandbox, provider, "automatic")
    captured, payment = await _paid(client, sandbox, provider, "manual")
    await _post(client, sandbox, f"/v1/payments/{payment['id']}/capture", {"amount": 1000})
    await _post(client, sandbox, f"/v1/payments/{payment['id']}/refunds", {"amount": 400})
    voided, payment = await _paid(client, sandbox, provider, "manual")
    await _post(client, sandbox, f"/v1/payments/{payment['id']}/void", {})
    still, _ = await _paid(client, sandbox, provider, "manual")
    visits += [at_once, captured, voided, still]

    books = [await driver(provider).money(client, runtime.cipher, visit) for visit in visits]
    assert books == [
        Money(0, 0),  # lapsed
        Money(0, AMOUNT),
        Money(0, 600),  # 1,000 captured, 400 refunded
        Money(0, 0),  # voided
        Money(AMOUNT, 0),  # held
    ], books

    [balance] = [
        row for row in await _export(client, runtime, sandbox, "balances") if row["provider"] == provider
    ]
    taken = AMOUNT + 1000
    assert (balance["authorized"], balance["refunded"], balance["net"]) == (taken, 400, taken - 400), balance
    assert balance["authorized"] - balance["refunded"] == sum(money.taken for money in books)
    payments = await _export(client, runtime, sandbox, "payments")
    still_held = sum(row["amount"] for row in payments if row["status"] == "REQUIRES_CAPTURE")
    assert balance["held"] == still_held >= AMOUNT, (balance, payments)  # the lapsed one, until payorch hears

    listed = (await client.get("/v1/payments?limit=100", headers=sandbox.headers)).json()["items"]
    by_id = {p["id"]: p for p in listed}
    for row in payments:
        api = by_id[row["payment_id"]]
        for name in ("capture_method", "amount_captured", "amount_released", "capture_before", "captured_at"):
            assert row[name] == api[name], (name, row, api)
    assert sorted(row["amount_captured"] for row in payments) == [0, 0, 0, 1000, AMOUNT]

    report = await reconcile(client, sandbox, runtime)
    assert report["findings"] == [], report["findings"]
    matched = of_provider(report, provider)["matched"]
    currency = payments[0]["currency"]
    assert matched["amounts"] == [{"currency": currency, "amount": taken}], matched
