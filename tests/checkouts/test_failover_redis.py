"""Provider health shared through Redis (PAYORCH_REDIS_URL): two runtimes (replicas) see the same
skipping. Uses the local Redis with a unique key prefix."""

from __future__ import annotations

import httpx
import pytest

from payorch.app import create_app
from payorch.clock import Clock, FrozenClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.providers.health import RedisHealth
from payorch.runtime import Runtime
from tests.kit import make_settings, mock_sandbox
from tests.providers.helpers import (
    REDIS_URL,
    A,
    B,
    checkout,
    create_intent,
    forget_redis_keys,
    redis_health,
    redis_prefix,
    set_fault,
)


async def health_of(clock: Clock, settings: Settings, prefix: str) -> RedisHealth:
    threshold, skip_seconds = settings.provider_failure_threshold, settings.provider_skip_seconds
    return await redis_health(clock, threshold, skip_seconds, prefix)


@pytest.fixture
def prefix() -> str:
    return redis_prefix()


@pytest.fixture
async def provider_health(clock: FrozenClock, database_url: str, prefix: str) -> RedisHealth:
    """This test's runtime shares its provider health through Redis (closed by the runtime)."""
    return await health_of(clock, make_settings(database_url), prefix)


async def test_a_provider_skipped_on_one_replica_is_skipped_on_another(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str, prefix: str
) -> None:
    settings = make_settings(database_url, redis_url=REDIS_URL)
    replica = build_runtime(
        settings,
        clock=runtime.clock,
        database=runtime.database,
        provider_health=await health_of(runtime.clock, settings, prefix),
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
            assert response.status_code == 200 and response.json()["provider"] == B  # skipped there too
    finally:
        store = runtime.provider_health
        assert isinstance(store, RedisHealth)
        await forget_redis_keys(store, prefix)
        await replica.close()
