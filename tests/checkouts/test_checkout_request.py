"""The checkout request: idempotency, routing errors, states; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import httpx
from sqlalchemy import func, select

from payorch.db.tables.providers import checkouts
from payorch.runtime import Runtime
from tests.kit import assert_error, intent_body, mock_sandbox, new_application
from tests.providers.helpers import A, B, checkout, create_intent, pay, read, start


async def checkout_count(runtime: Runtime, intent_id: str) -> int:
    async with runtime.database.transaction() as conn:
        query = select(func.count()).select_from(checkouts).where(checkouts.c.payment_intent_id == intent_id)
        return int((await conn.execute(query)).scalar_one())


async def test_same_key_same_answer_one_checkout(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    first = await checkout(client, sandbox, intent["id"], key="k-1")
    second = await checkout(client, sandbox, intent["id"], key="k-1")
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert second.headers.get("idempotent-replayed") == "true"
    assert await checkout_count(runtime, intent["id"]) == 1
    conflict = await checkout(client, sandbox, intent["id"], provider=B, key="k-1")
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"


async def test_concurrent_same_key_makes_one_checkout(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    responses = await asyncio.gather(*(checkout(client, sandbox, intent["id"], key="same") for _ in range(4)))
    codes = sorted(r.status_code for r in responses)
    assert codes.count(200) >= 1 and set(codes) <= {200, 409}, [r.text for r in responses]
    for r in responses:
        if r.status_code == 409:
            assert r.json()["error"]["code"] == "IDEMPOTENCY_KEY_IN_USE"
    assert await checkout_count(runtime, intent["id"]) == 1


async def test_concurrent_requests_without_key_leave_one_active(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    responses = await asyncio.gather(*(checkout(client, sandbox, intent["id"]) for _ in range(3)))
    assert any(r.status_code == 200 for r in responses)
    for r in responses:
        assert r.status_code in (200, 409), r.text
    async with runtime.database.transaction() as conn:
        query = (
            select(func.count())
            .select_from(checkouts)
            .where(checkouts.c.payment_intent_id == intent["id"], checkouts.c.status == "ACTIVE")
        )
        assert (await conn.execute(query)).scalar_one() == 1


async def test_provider_not_configured_is_422(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await new_application(runtime)  # no connectors at all
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"])
    assert response.status_code == 422 and response.json()["error"]["code"] == "CONNECTOR_NOT_CONFIGURED"
    # Only B enabled: asking for A is a 422; auto picks B.
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    added = await client.post(url, json={"provider": B, "mode": "MOCK"}, headers=sandbox.headers)
    assert added.status_code == 201
    response = await checkout(client, sandbox, intent["id"], A)
    assert response.status_code == 422 and response.json()["error"]["code"] == "CONNECTOR_NOT_CONFIGURED"
    # A disabled connector counts as not configured.
    disabled = await client.post(
        url, json={"provider": A, "mode": "MOCK", "enabled": False}, headers=sandbox.headers
    )
    assert disabled.status_code == 201
    response = await checkout(client, sandbox, intent["id"], A)
    assert response.status_code == 422


async def test_explicit_provider_must_be_enabled_at_intent_creation(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await new_application(runtime)
    body = intent_body(
        sandbox, external_reference="o", amount=100, return_url="https://shop.example/r", provider=A
    )
    response = await client.post("/v1/payment-intents", json=body, headers=sandbox.headers)
    assert response.status_code == 422 and response.json()["error"]["code"] == "CONNECTOR_NOT_CONFIGURED"
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    assert (
        await client.post(url, json={"provider": A, "mode": "MOCK"}, headers=sandbox.headers)
    ).status_code == 201
    response = await client.post("/v1/payment-intents", json=body, headers=sandbox.headers)
    assert response.status_code == 201
    # The intent's requested provider is used when the checkout body names none.
    answered = await checkout(client, sandbox, response.json()["id"])
    assert answered.status_code == 200 and answered.json()["provider"] == A


async def test_currency_must_be_supported(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await new_application(runtime)
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    await client.post(url, json={"provider": A, "mode": "MOCK"}, headers=sandbox.headers)
    intent = await create_intent(client, sandbox, amount=1000, currency="EUR")
    response = await checkout(client, sandbox, intent["id"])
    assert response.status_code == 422 and response.json()["error"]["code"] == "CONNECTOR_NOT_CONFIGURED"
    assert "EUR" in response.json()["error"]["message"]
    # Asked for by name, the provider that does not take EUR says so (not a configuration to fix).
    response = await checkout(client, sandbox, intent["id"], A)
    assert_error(response, 422, "CURRENCY_NOT_SUPPORTED")
    assert response.json()["error"]["details"] == {
        "provider": A,
        "currency": "EUR",
        "supported_currencies": ["CLP"],
    }


async def test_checkout_of_a_final_intent_is_409(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    await pay(client, body, "reject")
    response = await checkout(client, sandbox, intent["id"], key="after")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "INVALID_STATE" and error["details"]["status"] == "FAILED"
    assert error["details"]["allowed_statuses"] == ["CREATED", "REQUIRES_ACTION"]
    assert error["message"] == (
        "Not allowed while the status is FAILED. Allowed only while the status is CREATED or REQUIRES_ACTION."
    )
    # Errors free the key: nothing was stored.
    again = await checkout(client, sandbox, intent["id"], key="after")
    assert again.status_code == 409 and "idempotent-replayed" not in again.headers


async def test_replacing_a_paid_checkout_is_refused_and_records_the_payment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    from tests.providers.helpers import choose_without_returning

    sandbox = await mock_sandbox(runtime)
    intent, body = await start(client, sandbox)
    await choose_without_returning(client, body, "approve")  # paid, but not back yet
    response = await checkout(client, sandbox, intent["id"], A)
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["details"]["status"] == "AUTHORIZED"
    assert error["message"] == (
        "The buyer already started paying with the current checkout. "
        "Allowed only while the status is CREATED or REQUIRES_ACTION."
    )
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"


async def test_unknown_and_foreign_intents_are_404(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    other = await mock_sandbox(runtime)
    assert (await checkout(client, other, intent["id"])).status_code == 404
    assert (await checkout(client, sandbox, "payi_nothing")).status_code == 404
    bad = await client.post(
        f"/v1/payment-intents/{intent['id']}/checkout",
        json={"provider": "paypal"},
        headers=sandbox.headers,
    )
    assert bad.status_code == 400
    no_key = await client.post(f"/v1/payment-intents/{intent['id']}/checkout", json={})
    assert no_key.status_code == 401


async def test_a_request_without_body_uses_the_intent_provider(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox, provider=B)
    response = await client.post(f"/v1/payment-intents/{intent['id']}/checkout", headers=sandbox.headers)
    assert response.status_code == 200, response.text
    assert response.json()["provider"] == B
