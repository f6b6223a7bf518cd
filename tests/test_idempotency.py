"""Idempotency-Key through HTTP, as docs/api.md describes it, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json

import httpx
from sqlalchemy import func, select

from payorch.db.tables import idempotency_records, payment_intents
from payorch.runtime import Runtime
from tests import kit
from tests.kit import Sandbox, new_application


async def count_intents(runtime: Runtime, application_id: str) -> int:
    async with runtime.database.transaction() as conn:
        query = select(func.count()).where(payment_intents.c.application_id == application_id)
        return int((await conn.execute(query)).scalar_one())


def keyed(sandbox: Sandbox, key: str) -> dict[str, str]:
    return {**sandbox.headers, "Idempotency-Key": key}


async def test_retry_with_same_key_and_body_replays(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime
) -> None:
    first = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k1"))
    second = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k1"))
    assert first.status_code == second.status_code == 201
    assert second.content == first.content
    assert second.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert await count_intents(runtime, sandbox.application_id) == 1


async def test_key_order_and_white_space_do_not_matter(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object]
) -> None:
    headers = {**keyed(sandbox, "k-order"), "Content-Type": "application/json"}
    first = await client.post("/v1/payment-intents", content=json.dumps(intent_body), headers=headers)
    reordered = json.dumps(dict(reversed(list(intent_body.items()))), indent=4)
    second = await client.post("/v1/payment-intents", content=reordered, headers=headers)
    assert second.status_code == 201 and second.json()["id"] == first.json()["id"]


async def test_same_key_other_body_is_a_conflict(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime
) -> None:
    await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k2"))
    response = await client.post(
        "/v1/payment-intents", json=kit.intent_body(sandbox, amount=999), headers=keyed(sandbox, "k2")
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert await count_intents(runtime, sandbox.application_id) == 1


async def test_keys_are_scoped_to_the_application(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime
) -> None:
    other = await new_application(runtime)
    a = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "shared"))
    b = await client.post("/v1/payment-intents", json=kit.intent_body(other), headers=keyed(other, "shared"))
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"]


async def test_an_error_leaves_the_key_free(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime
) -> None:
    bad = kit.intent_body(sandbox, merchant_account_id="mrc_unknown")
    first = await client.post("/v1/payment-intents", json=bad, headers=keyed(sandbox, "k3"))
    assert first.status_code == 404
    again = await client.post("/v1/payment-intents", json=bad, headers=keyed(sandbox, "k3"))
    assert again.status_code == 404 and "idempotent-replayed" not in again.headers
    # Nothing was stored, so the key is not bound to the failed body either.
    good = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k3"))
    assert good.status_code == 201
    assert await count_intents(runtime, sandbox.application_id) == 1


async def test_a_key_still_in_flight_answers_in_use(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime, clock
) -> None:
    scope = runtime.idempotency.scope(
        sandbox.application_id, "POST", "/v1/payment-intents", "k4", intent_body
    )
    assert await runtime.idempotency.begin(scope) is None  # another request holds the key
    response = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k4"))
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "IDEMPOTENCY_KEY_IN_USE"
    assert error["details"]["retry_after_seconds"] >= 1
    assert response.headers["retry-after"]
    # The holder died: once its lease ends, a retry takes the key over.
    clock.advance(61)
    response = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k4"))
    assert response.status_code == 201
    assert await count_intents(runtime, sandbox.application_id) == 1


async def test_keys_expire_after_the_ttl_and_are_purged(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime, clock
) -> None:
    first = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k5"))
    clock.advance(runtime.settings.idempotency_ttl_seconds - 1)
    replay = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k5"))
    assert replay.json()["id"] == first.json()["id"]
    clock.advance(2)
    purged = await runtime.idempotency.purge()
    assert purged >= 1
    async with runtime.database.transaction() as conn:
        left = await conn.execute(
            select(idempotency_records.c.key).where(
                idempotency_records.c.application_id == sandbox.application_id
            )
        )
        assert left.first() is None
    fresh = await client.post(
        "/v1/payment-intents", json=kit.intent_body(sandbox, amount=7), headers=keyed(sandbox, "k5")
    )
    assert fresh.status_code == 201 and fresh.json()["id"] != first.json()["id"]


async def test_an_expired_key_not_yet_purged_is_reused(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime, clock
) -> None:
    first = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "k6"))
    clock.advance(runtime.settings.idempotency_ttl_seconds + 1)
    second = await client.post(
        "/v1/payment-intents", json=kit.intent_body(sandbox, amount=8), headers=keyed(sandbox, "k6")
    )
    assert second.status_code == 201 and second.json()["id"] != first.json()["id"]


async def test_32_concurrent_requests_with_one_key_create_one_intent(
    client: httpx.AsyncClient, sandbox: Sandbox, intent_body: dict[str, object], runtime: Runtime
) -> None:
    responses = await asyncio.gather(
        *(
            client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "race"))
            for _ in range(32)
        )
    )
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {201, 409}, statuses
    created_ids = {r.json()["id"] for r in responses if r.status_code == 201}
    assert len(created_ids) == 1
    for r in responses:
        if r.status_code == 409:
            assert r.json()["error"]["code"] == "IDEMPOTENCY_KEY_IN_USE"
    assert await count_intents(runtime, sandbox.application_id) == 1
    # Once the first finished, every retry replays it.
    replay = await client.post("/v1/payment-intents", json=intent_body, headers=keyed(sandbox, "race"))
    assert replay.json()["id"] in created_ids
