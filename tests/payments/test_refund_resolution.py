"""A refund whose provider answer is unknown stays PENDING (202) and the worker resolves it by
reading the provider first: never a second provider refund."""

from __future__ import annotations

import httpx

from payorch.clock import FrozenClock
from payorch.payments import repository as payments
from payorch.payments.resolve_refunds import ResolvePendingRefunds
from payorch.runtime import Runtime
from tests.databases import own_database
from tests.kit import Sandbox, authorized_payment
from tests.payments import fakes
from tests.payments.fakes import FakeGateway
from tests.payments.helpers import event_payloads, intent_status

database_url = own_database  # refund resolution sweeps the database: this module gets its own


async def refund_statuses(client: httpx.AsyncClient, app: Sandbox, payment_id: str) -> list[str]:
    response = await client.get(f"/v1/payments/{payment_id}/refunds", headers=app.headers)
    return [r["status"] for r in response.json()["items"]]


async def run_worker_until_idle(runtime: Runtime) -> None:
    job = ResolvePendingRefunds()
    while await job.run_once(runtime):
        pass


async def test_timeout_that_applied_is_resolved_without_a_second_refund(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    gateway: FakeGateway,
    clock: FrozenClock,
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    gateway.mode = fakes.TIMEOUT_APPLIED
    headers = {**sandbox.headers, "Idempotency-Key": "t-1"}
    response = await client.post(url, json={"amount": 400}, headers=headers)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "PENDING"
    assert await intent_status(client, sandbox, paid.intent_id) == "AUTHORIZED"
    # The reservation holds: only 600 is left meanwhile.
    over = await client.post(url, json={"amount": 601}, headers=sandbox.headers)
    assert over.status_code == 422 and over.json()["error"]["details"]["available_amount"] == 600
    # A replay with the key answers the same PENDING refund and sends nothing.
    replay = await client.post(url, json={"amount": 400}, headers=headers)
    assert replay.status_code == 202 and replay.json() == response.json()

    # Not due yet: the worker leaves it alone.
    await run_worker_until_idle(runtime)
    assert gateway.lookup_calls == []
    clock.advance(6)
    gateway.mode = fakes.OK
    await run_worker_until_idle(runtime)
    assert gateway.lookup_calls == [response.json()["refund_id"]]
    assert len(gateway.refund_calls) == 1, "the provider must never get the refund twice"
    assert await refund_statuses(client, sandbox, paid.payment_id) == ["SUCCEEDED"]
    assert await intent_status(client, sandbox, paid.intent_id) == "PARTIALLY_REFUNDED"
    emitted = await event_payloads(runtime, paid.intent_id)
    assert [e["type"] for e in emitted] == ["refund.requested", "refund.succeeded"]
    assert emitted[1]["data"]["payment_intent_status"] == "PARTIALLY_REFUNDED"
    # Nothing more to do.
    clock.advance(3600)
    await run_worker_until_idle(runtime)
    assert len(gateway.lookup_calls) == 1


async def test_5xx_that_did_not_apply_is_sent_again_once_after_reading(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    gateway: FakeGateway,
    clock: FrozenClock,
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    gateway.mode = fakes.TIMEOUT_NOT_APPLIED
    response = await client.post(f"/v1/payments/{paid.payment_id}/refunds", json={}, headers=sandbox.headers)
    assert response.status_code == 202
    refund_id = response.json()["refund_id"]

    # The provider is still down: the lookup cannot tell, so nothing is sent.
    gateway.lookup_mode = "unknown"
    clock.advance(6)
    await run_worker_until_idle(runtime)
    assert gateway.lookup_calls == [refund_id] and gateway.refund_calls == [refund_id]
    assert await refund_statuses(client, sandbox, paid.payment_id) == ["PENDING"]

    # Back up: the lookup says it never applied, so it is sent once more, and succeeds.
    gateway.lookup_mode = None
    gateway.mode = fakes.OK
    clock.advance(3600)
    await run_worker_until_idle(runtime)
    assert gateway.refund_calls == [refund_id, refund_id]
    assert gateway.total_applied() == 1000
    assert await refund_statuses(client, sandbox, paid.payment_id) == ["SUCCEEDED"]
    assert await intent_status(client, sandbox, paid.intent_id) == "REFUNDED"


async def test_a_refund_not_applied_is_not_sent_again_once_the_payment_is_disputed(
    gateway: FakeGateway,
    clock: FrozenClock,
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
) -> None:
    """The first call's answer was lost, and a chargeback opened before the worker's turn: the
    provider's read says the refund never applied, and it is FAILED rather than sent on top of
    the chargeback (a new refund would be refused with 409 PAYMENT_DISPUTED)."""
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    gateway.mode = fakes.TIMEOUT_NOT_APPLIED
    url = f"/v1/payments/{paid.payment_id}/refunds"
    response = await client.post(url, json={"amount": 300}, headers=sandbox.headers)
    assert response.status_code == 202
    async with runtime.database.transaction() as conn:
        await payments.set_dispute(conn, paid.payment_id, "OPEN", "chargeback", disputed_at=clock.now())
    gateway.mode = fakes.OK
    clock.advance(6)
    await run_worker_until_idle(runtime)
    assert gateway.lookup_calls == [response.json()["refund_id"]]
    assert gateway.refund_calls == [response.json()["refund_id"]] and gateway.total_applied() == 0
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    assert [r["status"] for r in listed] == ["FAILED"]
    assert "disputed" in listed[0]["failure_reason"]
    emitted = [e["type"] for e in await event_payloads(runtime, paid.intent_id)]
    assert emitted == ["refund.requested", "refund.failed"]


async def test_crash_in_the_adapter_leaves_pending_then_resolved(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    gateway: FakeGateway,
    clock: FrozenClock,
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=500)
    gateway.mode = fakes.CRASH
    response = await client.post(
        f"/v1/payments/{paid.payment_id}/refunds", json={"amount": 500}, headers=sandbox.headers
    )
    assert response.status_code == 202
    gateway.mode = fakes.REJECT
    clock.advance(6)
    await run_worker_until_idle(runtime)
    # Read first (not applied), then sent once more, and the provider refused: FAILED.
    assert await refund_statuses(client, sandbox, paid.payment_id) == ["FAILED"]
    emitted = [e["type"] for e in await event_payloads(runtime, paid.intent_id)]
    assert emitted == ["refund.requested", "refund.failed"]
    assert await intent_status(client, sandbox, paid.intent_id) == "AUTHORIZED"


async def test_request_that_died_mid_call_is_resolved_after_the_grace(
    client: httpx.AsyncClient,
    runtime: Runtime,
    sandbox: Sandbox,
    gateway: FakeGateway,
    clock: FrozenClock,
) -> None:
    """A process killed between the reservation and the answer: the PENDING refund becomes due
    once the call must have ended, and the worker reads the provider."""
    from payorch.auth.service import Caller
    from payorch.payments import refunds
    from payorch.payments.schemas import CreateRefund

    paid = await authorized_payment(runtime, sandbox, amount=800)
    caller = Caller(sandbox.application_id, "SANDBOX", "key_x")
    async with runtime.database.transaction() as conn:
        refund, _ = await refunds.reserve(
            conn, runtime, caller, paid.payment_id, CreateRefund(amount=800), None
        )
    gateway.applied[refund.id] = 800  # the provider got it; our process died before the answer
    clock.advance(runtime.settings.provider_timeout_seconds + 10)
    await run_worker_until_idle(runtime)
    assert gateway.lookup_calls == []  # still within the call's grace
    clock.advance(30)
    await run_worker_until_idle(runtime)
    assert gateway.lookup_calls == [refund.id] and gateway.refund_calls == []
    assert await refund_statuses(client, sandbox, paid.payment_id) == ["SUCCEEDED"]
    assert await intent_status(client, sandbox, paid.intent_id) == "REFUNDED"


async def test_a_refund_the_provider_refused_late_fails_and_is_never_sent_again(
    runtime: Runtime, client: httpx.AsyncClient, sandbox: Sandbox, gateway: FakeGateway, clock: FrozenClock
) -> None:
    """A provider whose word comes by notification: the refund was received (PENDING), then its
    word said no. Read back, it is FAILED with the provider's words; nothing is sent again."""
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    gateway.mode = fakes.TIMEOUT_NOT_APPLIED
    url = f"/v1/payments/{paid.payment_id}/refunds"
    response = await client.post(url, json={"amount": 400}, headers=sandbox.headers)
    assert response.status_code == 202, response.text
    gateway.lookup_mode = "refused"
    clock.advance(6)
    await run_worker_until_idle(runtime)
    assert await refund_statuses(client, sandbox, paid.payment_id) == ["FAILED"]
    assert len(gateway.refund_calls) == 1, "a refused refund is never sent again"
    listed = await client.get(url, headers=sandbox.headers)
    assert listed.json()["items"][0]["failure_reason"] == "Insufficient balance on payment"
    assert await intent_status(client, sandbox, paid.intent_id) == "AUTHORIZED"
    emitted = await event_payloads(runtime, paid.intent_id)
    assert [e["type"] for e in emitted] == ["refund.requested", "refund.failed"]
