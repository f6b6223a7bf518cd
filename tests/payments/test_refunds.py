"""Refunds through HTTP, on SQLite and PostgreSQL, against a fake provider behind the seam."""

from __future__ import annotations

import asyncio

import httpx

from payorch.runtime import Runtime
from tests.kit import Sandbox, authorized_payment, create_intent, new_application
from tests.payments import fakes
from tests.payments.fakes import FakeGateway
from tests.payments.helpers import event_payloads, intent_status


async def test_partial_then_full_refund(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"

    first = await client.post(url, json={"amount": 300, "reason": "damaged"}, headers=sandbox.headers)
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["refund_id"].startswith("rfd_")
    assert body["status"] == "SUCCEEDED" and body["amount"] == 300 and body["currency"] == "CLP"
    assert body["payment_id"] == paid.payment_id and body["payment_intent_id"] == paid.intent_id
    assert body["reason"] == "damaged" and body["failure_reason"] is None
    assert await intent_status(client, sandbox, paid.intent_id) == "PARTIALLY_REFUNDED"
    payment = (await client.get(f"/v1/payments/{paid.payment_id}", headers=sandbox.headers)).json()
    assert payment["status"] == "PARTIALLY_REFUNDED" and payment["refunded_amount"] == 300

    # No amount: all that is left.
    second = await client.post(url, headers=sandbox.headers)
    assert second.status_code == 201, second.text
    assert second.json()["amount"] == 700
    assert await intent_status(client, sandbox, paid.intent_id) == "REFUNDED"
    payment = (await client.get(f"/v1/payments/{paid.payment_id}", headers=sandbox.headers)).json()
    assert payment["status"] == "REFUNDED" and payment["refunded_amount"] == 1000
    assert gateway.total_applied() == 1000

    emitted = await event_payloads(runtime, paid.intent_id)
    assert [e["type"] for e in emitted] == [
        "refund.requested",
        "refund.succeeded",
        "refund.requested",
        "refund.succeeded",
    ]
    requested, succeeded = emitted[0]["data"], emitted[1]["data"]
    assert requested == {
        "payment_intent_id": paid.intent_id,
        "payment_id": paid.payment_id,
        "refund_id": body["refund_id"],
        "amount": 300,
        "currency": "CLP",
        "external_reference": payment["external_reference"],
        "metadata": {},  # the intent's (authorized_payment gives it none)
    }
    assert succeeded["payment_intent_status"] == "PARTIALLY_REFUNDED"
    assert succeeded["amount"] == 300 and succeeded["refund_id"] == body["refund_id"]
    assert emitted[3]["data"]["payment_intent_status"] == "REFUNDED"

    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    assert [r["amount"] for r in listed] == [700, 300]  # newest first

    # A refunded payment is not refundable any more.
    third = await client.post(url, json={"amount": 1}, headers=sandbox.headers)
    assert third.status_code == 409
    assert third.json()["error"]["code"] == "INVALID_STATE"
    assert third.json()["error"]["details"]["status"] == "REFUNDED"


async def test_over_refund_is_422_with_available_amount(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    assert (await client.post(url, json={"amount": 400}, headers=sandbox.headers)).status_code == 201
    response = await client.post(url, json={"amount": 601}, headers=sandbox.headers)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "REFUND_AMOUNT_EXCEEDED" and error["details"]["available_amount"] == 600
    assert gateway.refund_calls.__len__() == 1
    assert await intent_status(client, sandbox, paid.intent_id) == "PARTIALLY_REFUNDED"


async def test_bad_bodies_are_400(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    for body in (
        {"amount": 0},
        {"amount": -1},
        {"amount": "10"},
        {"amount": 1.5},
        {"x": 1},
        {"reason": "r" * 256},
    ):
        response = await client.post(url, json=body, headers=sandbox.headers)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert gateway.refund_calls == []


async def test_a_null_amount_is_400_and_refunds_nothing(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    # Only an absent amount means "all that is left"; an explicit null is a mistake.
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    for body in ({"amount": None}, {"amount": None, "reason": "oops"}):
        for key in (None, f"null-{body.get('reason')}"):
            headers = {**sandbox.headers, **({"Idempotency-Key": key} if key else {})}
            response = await client.post(url, json=body, headers=headers)
            assert response.status_code == 400, (body, response.text)
            error = response.json()["error"]
            assert error["code"] == "VALIDATION_ERROR"
            assert error["details"]["errors"][0]["field"] == "amount"
            assert error["message"].startswith("amount: ")
    # Nothing changed: no provider call, no refund row, no event, the intent as it was.
    assert gateway.refund_calls == []
    listed = await client.get(url, headers=sandbox.headers)
    assert listed.status_code == 200 and listed.json()["items"] == []
    payment = (await client.get(f"/v1/payments/{paid.payment_id}", headers=sandbox.headers)).json()
    assert payment["status"] == "AUTHORIZED" and payment["refunded_amount"] == 0
    assert await intent_status(client, sandbox, paid.intent_id) == "AUTHORIZED"
    assert await event_payloads(runtime, paid.intent_id) == []
    # A whole body of JSON null is refused the same way.
    for key in (None, "null-body"):
        headers = {**sandbox.headers, "Content-Type": "application/json"}
        headers.update({"Idempotency-Key": key} if key else {})
        response = await client.post(url, content=b"null", headers=headers)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["errors"][0]["field"] == "body"
    assert gateway.refund_calls == []
    assert await event_payloads(runtime, paid.intent_id) == []
    # Omitting it still refunds all that is left.
    whole = await client.post(url, json={"reason": "all"}, headers=sandbox.headers)
    assert whole.status_code == 201 and whole.json()["amount"] == 1000, whole.text


async def test_the_openapi_document_shows_amount_optional_and_not_nullable(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    schema = document["components"]["schemas"]["CreateRefund"]
    assert "amount" not in schema.get("required", [])
    amount = schema["properties"]["amount"]
    assert amount["type"] == "integer" and "anyOf" not in amount and "default" not in amount
    assert amount["exclusiveMinimum"] == 0 and amount["maximum"] == 999_999_999_999_999
    assert set(amount) == {"type", "title", "description", "exclusiveMinimum", "maximum"}


async def test_unknown_or_other_applications_payment_is_404(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox)
    other = await new_application(runtime)
    # An intent that was never authorized has no payment: its id (or an unknown one) is a 404.
    unpaid = await create_intent(client, sandbox, external_reference="unpaid", amount=1000)
    cases = (
        (sandbox, "pay_nope"),
        (sandbox, unpaid["id"]),
        (sandbox, paid.intent_id),
        (other, paid.payment_id),
    )
    for app, payment_id in cases:
        for method, path in (
            ("POST", f"/v1/payments/{payment_id}/refunds"),
            ("GET", f"/v1/payments/{payment_id}/refunds"),
            ("GET", f"/v1/payments/{payment_id}"),
        ):
            response = await client.request(
                method, path, json={} if method == "POST" else None, headers=app.headers
            )
            assert response.status_code == 404, (method, path, response.text)
            assert response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert gateway.refund_calls == []
    # Without a key at all: 401.
    response = await client.post(f"/v1/payments/{paid.payment_id}/refunds", json={})
    assert response.status_code == 401


async def test_an_intent_id_in_place_of_a_payment_id_points_to_payment_id(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox)
    intent = (await client.get(f"/v1/payment-intents/{paid.intent_id}", headers=sandbox.headers)).json()
    assert intent["payment"]["id"] == paid.payment_id  # where the message sends the reader
    for method, path in (
        ("POST", f"/v1/payments/{paid.intent_id}/refunds"),
        ("GET", f"/v1/payments/{paid.intent_id}/refunds"),
        ("GET", f"/v1/payments/{paid.intent_id}"),
    ):
        response = await client.request(
            method, path, json={} if method == "POST" else None, headers=sandbox.headers
        )
        assert response.status_code == 404, response.text
        error = response.json()["error"]
        assert error["code"] == "RESOURCE_NOT_FOUND"
        assert error["message"] == (
            f"{paid.intent_id} is a payment intent id, not a payment id. Use the intent's "
            "payment.id (pay_...), which the intent carries once authorized "
            f"(GET /v1/payment-intents/{paid.intent_id})."
        )
    assert gateway.refund_calls == []
    # Any other unknown id keeps the plain message.
    response = await client.post("/v1/payments/pay_nope/refunds", json={}, headers=sandbox.headers)
    assert response.json()["error"]["message"] == "No payment pay_nope."


async def test_payment_not_refundable_is_409(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, status="REFUNDED")
    response = await client.post(f"/v1/payments/{paid.payment_id}/refunds", json={}, headers=sandbox.headers)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["details"] == {
        "status": "REFUNDED",
        "allowed_statuses": ["AUTHORIZED", "PARTIALLY_REFUNDED"],
    }
    assert error["message"] == (
        "A REFUNDED payment cannot be refunded. "
        "Allowed only while the status is AUTHORIZED or PARTIALLY_REFUNDED."
    )
    assert gateway.refund_calls == []


async def test_provider_refusal_is_502_and_releases_the_amount(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    gateway.mode = fakes.REJECT
    headers = {**sandbox.headers, "Idempotency-Key": "refund-1"}
    response = await client.post(url, json={"amount": 1000}, headers=headers)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["code"] == "PROVIDER_ERROR" and error["details"]["refund_id"].startswith("rfd_")
    assert error["details"]["failure_reason"] == "16: refund not allowed"
    assert await intent_status(client, sandbox, paid.intent_id) == "AUTHORIZED"
    emitted = await event_payloads(runtime, paid.intent_id)
    assert [e["type"] for e in emitted] == ["refund.requested", "refund.failed"]
    assert emitted[1]["data"]["reason"] == "16: refund not allowed"
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    assert [(r["status"], r["failure_reason"]) for r in listed] == [("FAILED", "16: refund not allowed")]

    # The amount is available again, and an error left the key free: the same key runs again.
    gateway.mode = fakes.OK
    again = await client.post(url, json={"amount": 1000}, headers=headers)
    assert again.status_code == 201, again.text
    assert again.json()["refund_id"] != error["details"]["refund_id"]
    assert await intent_status(client, sandbox, paid.intent_id) == "REFUNDED"


async def test_idempotency_key_replays_and_refunds_once(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    headers = {**sandbox.headers, "Idempotency-Key": "k-1"}
    first = await client.post(url, json={"amount": 100}, headers=headers)
    replay = await client.post(url, json={"amount": 100}, headers=headers)
    assert first.status_code == replay.status_code == 201
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    conflict = await client.post(url, json={"amount": 200}, headers=headers)
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert len(gateway.refund_calls) == 1

    # Ten concurrent requests with one key: one refund.
    headers = {**sandbox.headers, "Idempotency-Key": "k-2"}
    answers = await asyncio.gather(
        *(client.post(url, json={"amount": 50}, headers=headers) for _ in range(10))
    )
    statuses = sorted(a.status_code for a in answers)
    assert set(statuses) <= {201, 409}, statuses
    assert len(gateway.refund_calls) == 2
    payment = (await client.get(f"/v1/payments/{paid.payment_id}", headers=sandbox.headers)).json()
    assert payment["refunded_amount"] == 150


async def test_ten_concurrent_refunds_of_30_percent_three_succeed(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, gateway: FakeGateway
) -> None:
    paid = await authorized_payment(runtime, sandbox, amount=1000)
    url = f"/v1/payments/{paid.payment_id}/refunds"
    gateway.delay = 0.01  # the provider takes a moment: reservations overlap with calls
    answers = await asyncio.gather(
        *(client.post(url, json={"amount": 300}, headers=sandbox.headers) for _ in range(10))
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] * 3 + [422] * 7, [a.text for a in answers]
    for answer in answers:
        if answer.status_code == 422:
            assert answer.json()["error"]["details"]["available_amount"] in (100, 400, 700)
    assert len(gateway.refund_calls) == 3 and gateway.total_applied() == 900
    payment = (await client.get(f"/v1/payments/{paid.payment_id}", headers=sandbox.headers)).json()
    assert payment["refunded_amount"] == 900 and payment["status"] == "PARTIALLY_REFUNDED"
    assert await intent_status(client, sandbox, paid.intent_id) == "PARTIALLY_REFUNDED"
    emitted = [e["type"] for e in await event_payloads(runtime, paid.intent_id)]
    assert emitted.count("refund.requested") == 3 and emitted.count("refund.succeeded") == 3
