"""Rate limiting per application (and per address without a valid key), through HTTP."""

from __future__ import annotations

import secrets

import httpx
import pytest

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.db import Database
from payorch.runtime import Runtime
from tests.kit import Sandbox, assert_error, make_settings, new_application
from tests.needs import missing

pytestmark = pytest.mark.settings(rate_limit="5/minute")


async def test_each_application_has_its_own_budget(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    remaining = []
    for _ in range(5):
        response = await client.get("/v1/payments", headers=sandbox.headers)
        assert response.status_code == 200
        assert response.headers["RateLimit-Limit"] == "5"
        assert 1 <= int(response.headers["RateLimit-Reset"]) <= 60
        remaining.append(int(response.headers["RateLimit-Remaining"]))
    assert remaining == [4, 3, 2, 1, 0]

    refused = await client.get("/v1/payments", headers=sandbox.headers)
    error = assert_error(refused, 429, "RATE_LIMIT_EXCEEDED")
    assert error["request_id"]
    wait = error["details"]["retry_after_seconds"]
    assert 1 <= wait <= 60 and refused.headers["Retry-After"] == str(wait)
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert refused.headers["X-Request-Id"] == error["request_id"]
    # Every key of the application shares the budget, and every route counts.
    created = await client.post("/v1/admin/api-credentials", json={}, headers=sandbox.headers)
    assert created.status_code == 429

    other = await new_application(runtime)
    response = await client.get("/v1/payments", headers=other.headers)
    assert response.status_code == 200 and response.headers["RateLimit-Remaining"] == "4"


async def test_two_keys_of_one_application_share_one_budget(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    created = await client.post("/v1/admin/api-credentials", json={}, headers=sandbox.headers)
    assert created.status_code == 201, created.text
    second = {"Authorization": f"Bearer {created.json()['api_key']}"}
    statuses = [
        (await client.get("/v1/payments", headers=headers)).status_code
        for headers in [second, sandbox.headers] * 3
    ]
    # 1 (creating the key) + 4 more exhaust the 5; the 6th is refused whichever key sends it.
    assert statuses == [200, 200, 200, 200, 429, 429]
    refused = await client.get("/v1/payments", headers=second)
    assert refused.status_code == 429 and refused.headers["RateLimit-Remaining"] == "0"


async def test_requests_without_a_valid_key_are_limited_per_address_more_strictly(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    # 5/minute per application -> 1/minute per address without a valid key.
    bad = {"Authorization": "Bearer pay_sb_0123456789ab_" + "0" * 48}
    first = await client.get("/v1/payments", headers=bad)
    assert first.status_code == 401 and first.headers["RateLimit-Limit"] == "1"
    second = await client.get("/v1/payments")
    assert second.status_code == 429
    assert int(second.headers["Retry-After"]) >= 1
    # The application's own budget is untouched.
    assert (await client.get("/v1/payments", headers=sandbox.headers)).status_code == 200


async def test_paths_without_keys_are_not_limited(client: httpx.AsyncClient) -> None:
    for _ in range(3):
        response = await client.get("/openapi.json")
        assert response.status_code == 200 and "RateLimit-Limit" not in response.headers


async def test_redis_storage_is_shared_by_replicas(
    database_url: str, database: Database, clock: FrozenClock
) -> None:
    """Two app instances (replicas) with PAYORCH_REDIS_URL share one budget."""
    import redis.asyncio as redis

    try:
        probe = redis.from_url("redis://127.0.0.1:6379/0")
        await probe.ping()
        await probe.aclose()
    except Exception as exc:  # noqa: BLE001
        missing(f"Redis is unreachable ({exc})")
    settings = make_settings(
        database_url,
        rate_limit=f"{3 + secrets.randbelow(3)}/minute",
        redis_url="redis://127.0.0.1:6379/0",
    )
    limit = settings.rate_limit_parts[0]
    runtimes = [build_runtime(settings, clock=clock, database=database) for _ in range(2)]
    app = await new_application(runtimes[0])
    clients = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(runtime=rt)), base_url="http://testserver"
        )
        for rt in runtimes
    ]
    try:
        statuses = [
            (await clients[i % 2].get("/v1/payments", headers=app.headers)).status_code
            for i in range(limit + 2)
        ]
    finally:
        for c in clients:
            await c.aclose()
        for rt in runtimes:
            await rt.close()
    assert statuses == [200] * limit + [429, 429]
