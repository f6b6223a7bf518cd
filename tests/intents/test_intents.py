"""Payment intents through HTTP: create, read, validation, tenancy."""

from __future__ import annotations

import re

import httpx
import pytest

from tests import kit
from tests.kit import Sandbox, create_intent, new_application

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def test_create_answers_201_with_the_spec_fields(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object]
) -> None:
    response = await client.post("/v1/payment-intents", json=intent_body, headers=sandbox.headers)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["id"].startswith("payi_")
    assert body["status"] == "CREATED"
    assert body["amount"] == 1500 and body["currency"] == "CLP"
    assert body["external_reference"] == "order-1"
    assert TIMESTAMP.match(body["created_at"])
    assert body["provider"] == "auto"
    assert [t["type"] for t in body["timeline"]] == ["payment_intent.created"]


async def test_read_has_provider_timeline_and_no_payment(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    created = await create_intent(client, sandbox)
    response = await client.get(f"/v1/payment-intents/{created['id']}", headers=sandbox.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == created["id"] and body["status"] == "CREATED"
    assert "payment" not in body
    assert body["timeline"][0]["type"] == "payment_intent.created"
    assert TIMESTAMP.match(body["timeline"][0]["at"])


async def test_another_application_gets_404(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime
) -> None:
    created = await create_intent(client, sandbox)
    other = await new_application(runtime)
    response = await client.get(f"/v1/payment-intents/{created['id']}", headers=other.headers)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    # Nor may it create an intent for the first application's merchant, with or without a key
    # (on PostgreSQL the check is part of the create's one statement), and nothing is written.
    for headers in (other.headers, {**other.headers, "Idempotency-Key": "not-yours"}):
        response = await client.post("/v1/payment-intents", json=intent_body, headers=headers)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
    assert (await client.get("/v1/payment-intents", headers=other.headers)).json()["items"] == []
    mine = (await client.get("/v1/payment-intents", headers=sandbox.headers)).json()["items"]
    assert [intent["id"] for intent in mine] == [created["id"]]
    events = (await client.get("/v1/events", headers=other.headers)).json()["items"]
    assert events == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"amount": 0}, "amount"),
        ({"amount": -5}, "amount"),
        ({"amount": "1500"}, "amount"),
        ({"amount": 15.5}, "amount"),
        ({"amount": 10**16}, "amount"),
        ({"currency": "ZZZ"}, "currency"),
        ({"currency": "clp"}, "currency"),
        ({"currency": "XAU"}, "currency"),
        ({"external_reference": ""}, "external_reference"),
        ({"external_reference": "x" * 65}, "external_reference"),
        ({"description": "d" * 256}, "description"),
        ({"return_url": "ftp://shop.example/r"}, "return_url"),
        ({"return_url": "not a url"}, "return_url"),
        ({"provider": "paypal"}, "provider"),
        ({"metadata": {"k": 1}}, "metadata.k"),
        ({"metadata": {"k" * 41: "v"}}, "metadata"),
        ({"metadata": {f"k{i}": "v" for i in range(51)}}, "metadata"),
        ({"metadata": {"k": "v" * 501}}, "metadata.k"),
        ({"surprise": True}, "surprise"),
    ],
)
async def test_bad_input_is_a_400_and_creates_nothing(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    change: dict[str, object],
    field: str,
) -> None:
    response = await client.post(
        "/v1/payment-intents", json=kit.intent_body(sandbox, **change), headers=sandbox.headers
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert any(e["field"] == field for e in error["details"]["errors"]), error
    # The validation library's own prefixes say nothing about what to fix.
    messages = [error["message"]] + [e["message"] for e in error["details"]["errors"]]
    assert not any("Value error" in m or "Assertion failed" in m for m in messages), messages


@pytest.mark.parametrize(
    ("currency", "expected"),
    [
        ("XAU", "currency: XAU (Gold) has no minor unit in ISO 4217"),
        ("XTS", "currency: XTS (Codes specifically reserved for testing purposes) has no minor unit"),
        ("usd", "currency: must be in upper case: USD"),
        ("ZZZ", "currency: must be an ISO 4217 currency code in upper case, such as CLP or USD"),
    ],
)
async def test_currency_refusals_say_why(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    currency: str,
    expected: str,
) -> None:
    response = await client.post(
        "/v1/payment-intents", json=kit.intent_body(sandbox, currency=currency), headers=sandbox.headers
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["message"].startswith(expected), response.text


@pytest.mark.parametrize(
    "missing", ["merchant_account_id", "external_reference", "amount", "currency", "return_url"]
)
async def test_required_fields(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], missing: str
) -> None:
    body = {k: v for k, v in intent_body.items() if k != missing}
    response = await client.post("/v1/payment-intents", json=body, headers=sandbox.headers)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["errors"][0]["field"] == missing


async def test_currency_exponents_come_from_iso_4217() -> None:
    from payorch import money

    assert money.exponent("CLP") == 0
    assert money.exponent("USD") == 2
    assert money.exponent("BHD") == 3
    assert money.exponent("XAU") is None
