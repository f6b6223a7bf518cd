"""The event catalogue (payorch.events.catalogue) against what payorch really writes, on SQLite
and PostgreSQL: real flows through HTTP and the simulator (authorized, declined, cancelled by the
buyer and by the merchant, held then captured or voided, in process, disputed and closed (a refund meanwhile refused by
payorch), then refunded in part and in full, a refund the provider refused, a test webhook
event); every event GET /v1/events lists is validated against its type's model, strictly and
with no unknown field, and against the OpenAPI document's ``webhooks`` entry for its type
(tests/events/helpers.py). The jobs' events:
tests/events/test_catalogue_jobs.py."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from payorch.clock import FrozenClock, isoformat
from payorch.events.catalogue import CATALOGUE, PaymentAuthorized, payload_of
from payorch.events.types import ALL_EVENT_TYPES, WEBHOOK_TEST, EventType
from payorch.payments.lapse_job import HoldDeadlines
from payorch.runtime import Runtime
from payorch.webhooks.tools import TEST_EVENT_TYPE
from tests.checkouts.helpers import control
from tests.databases import own_database
from tests.events.helpers import checked_events
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B, create_intent, pay, read, start

database_url = own_database  # a webhook endpoint with a queued test delivery: a database of its own


pytestmark = pytest.mark.settings(provider_timeout_seconds=5.0)  # as tests/payments/test_refunds_simulator.py


def test_every_event_type_has_a_model_and_nothing_else_does() -> None:
    assert set(CATALOGUE) == ALL_EVENT_TYPES | {WEBHOOK_TEST}
    assert TEST_EVENT_TYPE == WEBHOOK_TEST  # the test event's sender names the catalogue's type
    for event_type in EventType:
        assert payload_of(event_type).TYPE == event_type


def test_a_model_refuses_an_unknown_field_and_a_missing_one() -> None:
    fields = {"payment_intent_id": "payi_1", "payment_id": "pay_1", "provider": B, "amount": 1}
    with pytest.raises(ValidationError, match="currency"):
        PaymentAuthorized.model_validate(fields)
    with pytest.raises(ValidationError, match="extra"):
        PaymentAuthorized.model_validate({**fields, "currency": "CLP", "surprise": 1})


async def _refund(client: httpx.AsyncClient, sandbox: Sandbox, payment_id: str, key: str, **body: Any) -> int:
    answer = await client.post(
        f"/v1/payments/{payment_id}/refunds", json=body, headers={**sandbox.headers, "Idempotency-Key": key}
    )
    return answer.status_code


async def _settle(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, outcome: str) -> None:
    answer = await control(client, sandbox, "settle", payment_intent_id=intent_id, outcome=outcome)
    assert answer.status_code == 200, answer.text


async def _paid_disputed_and_refunded(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    intent, body = await start(client, sandbox, B)
    await pay(client, body, "approve")
    payment_id = (await read(client, sandbox, intent["id"]))["payment"]["id"]
    await _settle(client, sandbox, intent["id"], "mediation")
    assert await _refund(client, sandbox, payment_id, "in-mediation", amount=500) == 409  # disputed
    await _settle(client, sandbox, intent["id"], "mediation_won")
    assert await _refund(client, sandbox, payment_id, "part", amount=500) == 201
    assert await _refund(client, sandbox, payment_id, "rest") == 201
    assert (await read(client, sandbox, intent["id"]))["status"] == "REFUNDED"
    # refund.failed: refunded at the provider behind payorch's back, then refused there.
    other, body = await start(client, sandbox, B)
    await pay(client, body, "approve")
    behind = await control(
        client,
        sandbox,
        "discrepancies",
        provider=B,
        kind="refunded_at_provider",
        payment_intent_id=other["id"],
    )
    assert behind.status_code == 200, behind.text
    other_payment = (await read(client, sandbox, other["id"]))["payment"]["id"]
    assert await _refund(client, sandbox, other_payment, "refused") == 502


async def _expired_link(client: httpx.AsyncClient, sandbox: Sandbox, clock: FrozenClock) -> None:
    """payment_link.expired: a link read past its expires_at (the project's clock)."""
    body = {
        "merchant_account_id": sandbox.merchant_account_id,
        "amount": 1500,
        "currency": "CLP",
        "description": "expires",
        "expires_at": isoformat(clock.now() + timedelta(minutes=5)),
    }
    link = await client.post("/v1/payment-links", json=body, headers=sandbox.headers)
    assert link.status_code == 201, link.text
    clock.advance(300)
    read = await client.get(f"/v1/payment-links/{link.json()['id']}", headers=sandbox.headers)
    assert read.json()["status"] == "EXPIRED"


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_every_event_written_by_the_real_flows_matches_the_catalogue(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    await _paid_disputed_and_refunded(client, sandbox)
    for button in ("reject", "cancel", "pending"):  # declined, cancelled by the buyer, in process
        await pay(client, (await start(client, sandbox, B))[1], button)
    for move in ("capture", "void"):  # held (capture_method manual), then captured or voided
        held_intent, held_checkout = await start(client, sandbox, capture_method="manual")
        await pay(client, held_checkout, "approve")
        held_payment = (await read(client, sandbox, held_intent["id"]))["payment"]["id"]
        moved = await client.post(f"/v1/payments/{held_payment}/{move}", json={}, headers=sandbox.headers)
        assert moved.status_code == 200, moved.text
    lapsing_intent, lapsing_checkout = await start(client, sandbox, capture_method="manual")
    await pay(client, lapsing_checkout, "approve")
    clock.advance(7 * 86400 - 3600)  # a day's lead: payment.capture_due (payments/lapse_job.py)
    await HoldDeadlines().run_once(runtime)
    clock.advance(-(7 * 86400 - 3600))
    by_merchant = await create_intent(client, sandbox)
    cancelled = await client.post(
        f"/v1/payment-intents/{by_merchant['id']}/cancel", json={}, headers=sandbox.headers
    )
    assert cancelled.status_code == 200, cancelled.text
    endpoint = await client.post(
        "/v1/admin/webhook-endpoints", json={"url": "https://shop.example/hooks"}, headers=sandbox.headers
    )
    assert endpoint.status_code == 201, endpoint.text
    sent = await client.post(
        f"/v1/admin/webhook-endpoints/{endpoint.json()['data']['id']}/test", headers=sandbox.headers
    )
    assert sent.status_code == 202, sent.text
    await _expired_link(client, sandbox, clock)

    events = await checked_events(client, sandbox)
    seen = {event["type"] for event in events}
    never_here = {  # the jobs' events: tests/events/test_catalogue_jobs.py
        EventType.PAYMENT_EXPIRED,
        EventType.WEBHOOK_ENDPOINT_DISABLED,
        EventType.RECONCILIATION_DISCREPANCY,
        EventType.PAYMENT_LINK_COMPLETED,  # paid through its page: tests/links/test_buyer_page.py
        EventType.PAYMENT_ATTEMPT_FAILED,  # opted-in routing: tests/checkouts/test_second_chance.py
    }
    assert seen == set(CATALOGUE) - never_here
    failed = [e["data"] for e in events if e["type"] == EventType.PAYMENT_FAILED]
    assert [d["last_payment_error"]["code"] for d in failed] == ["declined"]
