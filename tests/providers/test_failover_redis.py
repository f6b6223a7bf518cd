"""Provider health shared through Redis (PAYORCH_REDIS_URL): two runtimes (replicas) see the same
skipping. Uses the local Redis with a unique key prefix."""

from __future__ import annotations

import secrets

import httpx
import pytest

from payorch.app import create_app
from payorch.clock import Clock, FrozenClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.providers.health import RedisHealth
from payorch.runtime import Runtime
from tests.conftest import make_settings
from tests.providers.helpers import A, B, checkout, create_intent, mock_sandbox, set_fault

REDIS_URL = "redis://127.0.0.1:6379/0"


async def redis_health(clock: Clock, settings: Settings, prefix: str) -> RedisHealth:
    health = RedisHealth.from_url(
        REDIS_URL,
        clock,
        settings.provider_failure_threshold,
        settings.provider_skip_seconds,
        prefix=prefix,
    )
    try:
        await health._redis.ping()
    except Exception as exc:  # noqa: BLE001
        await health.aclose()
        pytest.skip(f"Redis unreachable: {exc}")
    return health


@pytest.fixture
def prefix() -> str:
    return f"payorch-test-{secrets.token_hex(6)}:"


@pytest.fixture
async def provider_health(clock: FrozenClock, database_url: str, prefix: str) -> RedisHealth:
    """This test's runtime shares its provider health through Redis (closed by the runtime)."""
    return await redis_health(clock, make_settings(database_url), prefix)


async def test_a_provider_skipped_on_one_replica_is_skipped_on_another(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, prefix: str
) -> None:
    settings = make_settings(database_url, redis_url=REDIS_URL)
    replica = build_runtime(
        settings,
        clock=runtime.clock,
        database=runtime.database,
        provider_health=await redis_health(runtime.clock, settings, prefix),
    )
    try:
        sandbox = await mock_sandbox(runtime)
        await set_fault(client, sandbox, A, "error")
        for _ in range(3):
            intent = await create_intent(client, sandbox)
            response = await checkout(client, sandbox, intent["id"])
            assert response.json()["provider"] == B
        await set_fault(client, sandbox, A, "ok")
        transport = httpx.ASGITransport(app=create_app(runtime=replica))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as other:
            intent = await create_intent(other, sandbox)
            response = await checkout(other, sandbox, intent["id"])
            assert (
                response.status_code == 200 and response.json()["provider"] == B
            )  # skipped there too
    finally:
        store = runtime.provider_health
        assert isinstance(store, RedisHealth)
        keys = [k async for k in store._redis.scan_iter(match=prefix + "*")]
        if keys:
            await store._redis.delete(*keys)
        await replica.close()
