"""Provider B's hard cases through HTTP, on SQLite and PostgreSQL: every payment status the
simulator produces and what payorch makes of it (docs/checkout.md, "Provider B's statuses"),
several payments on one preference, and notices that arrive more than once, late, out of order,
in the older IPN style or on the merchant_order topic."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.client import Payment as ClientPayment
from payorch.runtime import Runtime
from tests.checkouts.helpers import _disputes, _payment, b_choose_silently, connector_id, control
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import B, events_of, pay, read, start

# Its notices fail under a fault held for the whole request, then come again on the control.
pytestmark = pytest.mark.usefixtures("brisk_quick_retries")


async def moved(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, outcome: str) -> None:
    answer = await control(client, sandbox, "settle", payment_intent_id=intent_id, outcome=outcome)
    assert answer.status_code == 200, answer.text
    assert answer.json()["provider"] == B


async def notices(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, **how: Any) -> dict[str, Any]:
    answer = await control(client, sandbox, "notifications", payment_intent_id=intent_id, **how)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


@pytest.mark.parametrize(
    ("button", "then", "status"),
    [
        ("approve", None, "AUTHORIZED"),
        ("reject", None, "FAILED"),
        ("cancel", None, "CANCELLED"),
        ("pending", None, "PROCESSING"),
        ("review", None, "PROCESSING"),  # in_process: manual review
        ("review", "approve", "AUTHORIZED"),
        ("pending", "reject", "FAILED"),
        ("review", "cancel", "FAILED"),  # cancelled by the provider while in process
    ],
)
async def test_each_status_moves_the_intent_as_documented(
    client: httpx.AsyncClient,
    runtime: Runtime,
    button: str,
    then: str | None,
    status: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await pay(client, body, button)
    if then is not None:
        await moved(client, sandbox, intent["id"], then)  # notified, signed
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == status
    assert types(await events_of(runtime, intent["id"])).count("payment.authorized") == (
        1 if status == "AUTHORIZED" else 0
    )


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
@pytest.mark.parametrize("order", ["oldest_first", "newest_first"])
@pytest.mark.parametrize(
    ("style", "topic"),
    [("webhook", "payment"), ("ipn", "payment"), ("webhook", "merchant_order"), ("ipn", "merchant_order")],
)
async def test_a_rejection_then_a_retry_that_paid_authorizes_once_whatever_the_notices(
    client: httpx.AsyncClient, runtime: Runtime, order: str, style: str, topic: str
) -> None:
    """Two payments on one preference (rejected, then approved); neither the buyer's return nor
    the first notices reached us. Then the notices come, duplicated, in either order, in either
    style: the intent is authorized once, by the approved payment; later (stale) notices of the
    rejection move nothing back."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await b_choose_silently(client, sandbox, body, "reject")
    await b_choose_silently(client, sandbox, body, "approve")
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"

    sent = await notices(client, sandbox, intent["id"], style=style, topic=topic, order=order, copies=3)
    assert sent["notifications"] == 6 and len(set(sent["payment_ids"])) == 2
    read_back = await read(client, sandbox, intent["id"])
    assert read_back["status"] == "AUTHORIZED"
    events = await events_of(runtime, intent["id"])
    assert types(events).count("payment.authorized") == 1
    assert "payment.failed" not in types(events)

    # Late: the rejection's notice again, and again; nothing moves, nothing is emitted.
    await notices(client, sandbox, intent["id"], style=style, topic=topic, order="oldest_first")
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert await events_of(runtime, intent["id"]) == events


async def test_an_unsigned_ipn_is_only_a_hint_to_read_the_payment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The older IPN style carries no signature: its body and query are believed for nothing,
    the payment is read. A pending payment stays in process whatever the IPN claims; an id of
    another application's payment is not ours to read."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    trip = await pay(client, body, "pending")
    assert trip.left_to is not None
    pending_id = (
        httpx.URL(trip.left_to).params.get("payment_id")
        or (await notices(client, sandbox, intent["id"]))["payment_ids"][0]
    )
    url = f"/v1/provider-notifications/{B}/{await connector_id(client, sandbox, B)}"
    claimed = {"resource": f"/v1/payments/{pending_id}", "topic": "payment", "status": "approved"}
    answer = await client.post(url, params={"topic": "payment", "id": pending_id}, json=claimed)
    assert answer.status_code == 200, answer.text
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"

    other = await mock_sandbox(runtime)
    their_intent, their_body = await start(client, other, B)
    await pay(client, their_body, "approve")
    their_payment = (await notices(client, other, their_intent["id"]))["payment_ids"][0]
    answer = await client.post(url, params={"topic": "payment", "id": their_payment})
    assert answer.status_code == 200
    assert (await read(client, sandbox, intent["id"]))["status"] == "PROCESSING"
    assert "payment.authorized" not in types(await events_of(runtime, intent["id"]))


async def test_a_signed_webhook_with_a_bad_signature_is_still_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The IPN leniency does not reach the webhook style: ``data.id`` without a valid
    signature is refused (400), whatever else the query carries."""
    sandbox = await mock_sandbox(runtime)
    url = f"/v1/provider-notifications/{B}/{await connector_id(client, sandbox, B)}"
    answer = await client.post(
        url, params={"data.id": "123", "type": "payment", "topic": "payment", "id": "123"}
    )
    assert answer.status_code == 400


async def test_a_mediation_is_recorded_once_and_closes_won_without_touching_refunds(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await pay(client, body, "approve")
    await moved(client, sandbox, intent["id"], "mediation")
    await notices(client, sandbox, intent["id"], copies=3)  # duplicates of the mediation
    payment = await _payment(client, sandbox, intent["id"])
    assert payment["dispute"]["status"] == "OPEN" and payment["dispute"]["kind"] == "mediation"
    assert payment["dispute"]["closed_at"] is None
    typed = ClientPayment.model_validate(payment).dispute  # the Python client reads it too
    assert typed is not None and typed.status == "OPEN" and typed.disputed_at is not None
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    events = await events_of(runtime, intent["id"])
    assert _disputes(events) == [("payment.disputed", "mediation", None)]
    disputed = next(e for e in events if e["type"] == "payment.disputed")
    assert disputed["data"] == {
        "payment_intent_id": intent["id"],
        "external_reference": intent["external_reference"],
        "metadata": intent["metadata"],
        "payment_id": payment["id"],
        "provider": B,
        "kind": "mediation",
        "provider_status": "in_mediation/in_mediation",
    }

    # While the mediation is open payorch refuses a refund itself (the provider would too): 409
    # PAYMENT_DISPUTED, and nothing is taken from what can be refunded.
    refused = await client.post(
        f"/v1/payments/{payment['id']}/refunds",
        json={"amount": 500},
        headers={**sandbox.headers, "Idempotency-Key": "during-mediation"},
    )
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "PAYMENT_DISPUTED"
    assert refused.json()["error"]["details"]["dispute_status"] == "OPEN"
    assert (await _payment(client, sandbox, intent["id"]))["refunded_amount"] == 0

    await moved(client, sandbox, intent["id"], "mediation_won")
    await notices(client, sandbox, intent["id"], style="ipn")  # late, and again
    payment = await _payment(client, sandbox, intent["id"])
    assert payment["dispute"]["status"] == "WON" and payment["dispute"]["closed_at"]
    assert _disputes(await events_of(runtime, intent["id"])) == [
        ("payment.disputed", "mediation", None),
        ("payment.dispute_closed", "mediation", "won"),
    ]
    # Refund arithmetic is the payment's own: all of it can still be refunded.
    assert payment["refunded_amount"] == 0 and payment["status"] == "AUTHORIZED"
    refund = await client.post(
        f"/v1/payments/{payment['id']}/refunds",
        json={},
        headers={**sandbox.headers, "Idempotency-Key": "after-mediation"},
    )
    assert refund.status_code in (200, 201) and refund.json()["status"] == "SUCCEEDED", refund.text
    assert (await _payment(client, sandbox, intent["id"]))["refunded_amount"] == 1500


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_a_chargeback_lost_is_recorded_even_when_its_opening_notice_was_lost(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The chargeback's first notice never reached us (our endpoint failed it: the provider's
    API was down for us); the notice that it was lost arrives: both are recorded, in order."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await pay(client, body, "approve")
    await control(client, sandbox, "faults", provider=B, mode="error")
    await moved(client, sandbox, intent["id"], "chargeback")
    await control(client, sandbox, "faults", provider=B, mode="ok")
    assert (await _payment(client, sandbox, intent["id"]))["dispute"] is None
    await moved(client, sandbox, intent["id"], "chargeback_lost")
    payment = await _payment(client, sandbox, intent["id"])
    assert payment["dispute"]["status"] == "LOST" and payment["dispute"]["kind"] == "chargeback"
    assert payment["refunded_amount"] == 0 and payment["status"] == "AUTHORIZED"
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    events = await events_of(runtime, intent["id"])
    assert _disputes(events) == [
        ("payment.disputed", "chargeback", None),
        ("payment.dispute_closed", "chargeback", "lost"),
    ]
    closed = events[-1]
    assert closed["data"]["provider_status"] == "charged_back/settled"
    await notices(client, sandbox, intent["id"], copies=2, order="newest_first")
    assert _disputes(await events_of(runtime, intent["id"])) == _disputes(events)


async def test_a_chargeback_won_after_a_won_mediation_is_a_second_dispute(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await pay(client, body, "approve")
    for outcome in ("mediation", "mediation_won", "chargeback", "chargeback_won"):
        await moved(client, sandbox, intent["id"], outcome)
    assert _disputes(await events_of(runtime, intent["id"])) == [
        ("payment.disputed", "mediation", None),
        ("payment.dispute_closed", "mediation", "won"),
        ("payment.disputed", "chargeback", None),
        ("payment.dispute_closed", "chargeback", "won"),
    ]
    payment = await _payment(client, sandbox, intent["id"])
    assert payment["dispute"]["status"] == "WON" and payment["dispute"]["kind"] == "chargeback"


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_a_payment_first_seen_in_mediation_is_authorized_then_disputed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """A late notice: the buyer paid (its return and notice lost) and opened a mediation before
    any notice reached us. The payment was made: the intent is authorized, then disputed."""
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    await b_choose_silently(client, sandbox, body, "approve")
    await control(client, sandbox, "faults", provider=B, mode="error")
    await moved(client, sandbox, intent["id"], "mediation")
    await control(client, sandbox, "faults", provider=B, mode="ok")
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    await notices(client, sandbox, intent["id"])
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    kinds = types(await events_of(runtime, intent["id"]))
    assert kinds[-2:] == ["payment.authorized", "payment.disputed"]


async def test_provider_a_cannot_be_disputed_from_the_controls(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, _ = await start(client, sandbox, "provider_a_redirect_post")
    answer = await control(client, sandbox, "settle", payment_intent_id=intent["id"], outcome="chargeback")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == "Nothing to chargeback for this payment intent."
    bad = await control(client, sandbox, "settle", payment_intent_id=intent["id"], outcome="x")
    assert bad.status_code == 400 and "outcome" in bad.json()["error"]["message"], bad.text


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_concurrent_duplicate_notices_authorize_once_and_dispute_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Five copies of one signed notice at the same moment: one authorization; later, five
    copies of the mediation's notice: one payment.disputed."""
    import asyncio

    from tests.checkouts.helpers import b_notify

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox, B)
    genuine = await b_choose_silently(client, sandbox, body, "approve")
    payment_id = genuine["payment_id"]
    answers = await asyncio.gather(
        *(b_notify(client, runtime, sandbox, payment_id, "approved") for _ in range(5))
    )
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert types(await events_of(runtime, intent["id"])).count("payment.authorized") == 1

    await control(client, sandbox, "faults", provider=B, mode="error")
    await moved(client, sandbox, intent["id"], "mediation")  # its own notice fails
    await control(client, sandbox, "faults", provider=B, mode="ok")
    answers = await asyncio.gather(
        *(b_notify(client, runtime, sandbox, payment_id, "approved") for _ in range(5))
    )
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert _disputes(await events_of(runtime, intent["id"])) == [("payment.disputed", "mediation", None)]
