"""Refunds through the real adapters and the simulator, for each provider, on SQLite and
PostgreSQL: a sandbox payment paid at the simulator page, then refunded over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from payorch.clock import FrozenClock
from payorch.db.tables.simulator import simulator_a_transactions, simulator_b_refunds
from payorch.payments.resolve_refunds import ResolvePendingRefunds
from payorch.providers.provider_d import PROVIDER_D
from payorch.runtime import Runtime
from tests.databases import own_database
from tests.kit import Sandbox, chosen_providers, mock_sandbox
from tests.providers.helpers import A, B, events_of, pay, read, set_fault, start
from tests.reconciliation.helpers import C

# Each test reads the refunds where A's and B's simulators keep them (provider_refunded).
PROVIDERS = chosen_providers(
    A,
    B,
    left_out={
        C: "every provider's refunds: tests/conformance/test_refunds.py",
        PROVIDER_D: "every provider's refunds: tests/conformance/test_refunds.py",
    },
)

database_url = own_database  # refund resolution sweeps the database: this module gets its own


# The simulator's `timeout` fault answers after provider_timeout_seconds + 1. Not lower: on a
# loaded 2-core machine running the suite in parallel, an in-process call took over 1 s, and
# once (2026-11-23, the whole suite on SQLite) a checkout's over 2.5 s.
pytestmark = pytest.mark.settings(provider_timeout_seconds=5.0)


async def paid_payment(
    client: httpx.AsyncClient, sandbox: Sandbox, provider: str, amount: int
) -> dict[str, Any]:
    intent, checkout = await start(client, sandbox, provider, amount=amount)
    trip = await pay(client, checkout, "approve")
    assert trip.left_to is not None, trip
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED", read_back
    payment = await client.get(f"/v1/payments/{read_back['payment']['id']}", headers=sandbox.headers)
    assert payment.status_code == 200
    return dict(payment.json())


async def refunded_at_provider(runtime: Runtime, provider: str, payment: dict[str, Any]) -> int:
    """What the simulated provider's own books say was refunded (A: token, B: payment id)."""
    from payorch.payments import repository

    async with runtime.database.engine.connect() as conn:
        row = await repository.get_any(conn, payment["id"])
        assert row is not None
        if provider == A:
            query = select(simulator_a_transactions.c.nullified_amount).where(
                simulator_a_transactions.c.token == row.provider_reference
            )
            return int((await conn.execute(query)).scalar_one())
        query = select(func.coalesce(func.sum(simulator_b_refunds.c.amount_hundredths), 0)).where(
            simulator_b_refunds.c.payment_id == int(row.provider_reference)
        )
        return int((await conn.execute(query)).scalar_one()) // 100  # CLP has no minor unit


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_partial_then_full_refund_through_the_simulator(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    payment = await paid_payment(client, sandbox, provider, 1500)
    assert payment["provider"] == provider and payment["status"] == "AUTHORIZED"
    assert payment["amount"] == 1500 and payment["refunded_amount"] == 0
    listed = (await client.get("/v1/payments", headers=sandbox.headers)).json()
    assert [p["id"] for p in listed["items"]] == [payment["id"]]
    url = f"/v1/payments/{payment['id']}/refunds"

    partial = await client.post(
        url, json={"amount": 500}, headers={**sandbox.headers, "Idempotency-Key": "r-1"}
    )
    assert partial.status_code == 201, partial.text
    assert partial.json()["status"] == "SUCCEEDED" and partial.json()["amount"] == 500
    intent = await read(client, sandbox, payment["payment_intent_id"])
    assert intent["status"] == "PARTIALLY_REFUNDED"
    assert intent["payment"]["status"] == "PARTIALLY_REFUNDED"
    assert await refunded_at_provider(runtime, provider, payment) == 500

    rest = await client.post(url, json={}, headers={**sandbox.headers, "Idempotency-Key": "r-2"})
    assert rest.status_code == 201, rest.text
    assert rest.json()["amount"] == 1000
    intent = await read(client, sandbox, payment["payment_intent_id"])
    assert intent["status"] == "REFUNDED"
    assert await refunded_at_provider(runtime, provider, payment) == 1500
    types = [e["type"] for e in await events_of(runtime, payment["payment_intent_id"])]
    assert types[-4:] == ["refund.requested", "refund.succeeded"] * 2
    assert [t["type"] for t in intent["timeline"]][-4:] == types[-4:]

    over = await client.post(url, json={"amount": 1}, headers=sandbox.headers)
    assert over.status_code == 409


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_provider_timeout_then_the_worker_resolves_with_one_provider_refund(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    payment = await paid_payment(client, sandbox, provider, 1500)
    url = f"/v1/payments/{payment['id']}/refunds"

    await set_fault(client, sandbox, provider, "timeout")
    response = await client.post(url, json={"amount": 600}, headers=sandbox.headers)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "PENDING"

    # The provider answers 500 now: the worker cannot tell, so it sends nothing.
    await set_fault(client, sandbox, provider, "error")
    clock.advance(10)
    job = ResolvePendingRefunds()
    while await job.run_once(runtime):
        pass
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    assert [r["status"] for r in listed] == ["PENDING"]

    # Back to normal: the worker reads the provider (not applied), sends it once, done.
    await set_fault(client, sandbox, provider, "ok")
    clock.advance(3600)
    while await job.run_once(runtime):
        pass
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    assert [r["status"] for r in listed] == ["SUCCEEDED"]
    assert await refunded_at_provider(runtime, provider, payment) == 600
    intent = await read(client, sandbox, payment["payment_intent_id"])
    assert intent["status"] == "PARTIALLY_REFUNDED"
    succeeded = [
        e for e in await events_of(runtime, payment["payment_intent_id"]) if e["type"] == "refund.succeeded"
    ]
    assert len(succeeded) == 1
    assert succeeded[0]["data"]["payment_intent_status"] == "PARTIALLY_REFUNDED"

    # Nothing left to do, and the provider's books never move again.
    clock.advance(3600)
    assert await job.run_once(runtime) == 0
    assert await refunded_at_provider(runtime, provider, payment) == 600


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_provider_refusal_is_502_and_nothing_moves(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    payment = await paid_payment(client, sandbox, provider, 1500)
    # Someone refunds everything at the provider behind our back: our refund is then refused.
    from payorch.payments import repository
    from payorch.payments.refund_gateway import GatewayRefundOutcome, RefundOrder
    from payorch.payments.refunds import refund_connector

    async with runtime.database.engine.connect() as conn:
        row = await repository.get_any(conn, payment["id"])
        assert row is not None
        connector = await refund_connector(conn, runtime.cipher, row.merchant_account_id, provider)
    order = RefundOrder(
        refund_id="rfd_behind_our_back",
        amount=1500,
        currency="CLP",
        application_id=row.application_id,
        merchant_account_id=row.merchant_account_id,
        payment_id=row.id,
        payment_intent_id=row.payment_intent_id,
        payment_amount=1500,
        provider=provider,
        provider_reference=row.provider_reference,
        refunded_before=0,
        connector=connector,
    )
    assert (await runtime.refund_gateway.refund(order)).outcome is GatewayRefundOutcome.SUCCEEDED

    url = f"/v1/payments/{payment['id']}/refunds"
    response = await client.post(url, json={"amount": 700}, headers=sandbox.headers)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["code"] == "PROVIDER_ERROR" and error["details"]["failure_reason"]
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    assert [r["status"] for r in listed] == ["FAILED"]
    intent = await read(client, sandbox, payment["payment_intent_id"])
    assert intent["status"] == "AUTHORIZED"
    types = [e["type"] for e in await events_of(runtime, payment["payment_intent_id"])]
    assert types[-2:] == ["refund.requested", "refund.failed"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_ten_concurrent_refunds_of_30_percent_through_the_simulator(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    import asyncio

    sandbox = await mock_sandbox(runtime)
    payment = await paid_payment(client, sandbox, provider, 1000)
    url = f"/v1/payments/{payment['id']}/refunds"
    answers = await asyncio.gather(
        *(client.post(url, json={"amount": 300}, headers=sandbox.headers) for _ in range(10))
    )
    assert sorted(a.status_code for a in answers) == [201] * 3 + [422] * 7, [a.text for a in answers]
    assert await refunded_at_provider(runtime, provider, payment) == 900
    intent = await read(client, sandbox, payment["payment_intent_id"])
    assert intent["status"] == "PARTIALLY_REFUNDED"
    read_back = (await client.get(f"/v1/payments/{payment['id']}", headers=sandbox.headers)).json()
    assert read_back["refunded_amount"] == 900


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_disabled_connector_still_refunds_the_payments_it_took(
    client: httpx.AsyncClient, runtime: Runtime, provider: str
) -> None:
    """The refund goes through the configuration that took the payment, enabled or not."""
    sandbox = await mock_sandbox(runtime)
    payment = await paid_payment(client, sandbox, provider, 1200)
    connectors_url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    listed = (await client.get(connectors_url, headers=sandbox.headers)).json()["items"]
    connector = next(c for c in listed if c["provider"] == provider)
    disabled = await client.patch(
        f"{connectors_url}/{connector['id']}", json={"enabled": False}, headers=sandbox.headers
    )
    assert disabled.status_code == 200, disabled.text

    url = f"/v1/payments/{payment['id']}/refunds"
    response = await client.post(url, json={"amount": 400}, headers=sandbox.headers)
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "SUCCEEDED"
    assert await refunded_at_provider(runtime, provider, payment) == 400
