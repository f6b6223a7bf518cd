"""Provider health shared through Redis (PAYORCH_REDIS_URL): two runtimes (replicas) see the same
skipping. Uses the local Redis with a unique key prefix."""

from __future__ import annotations

import secrets

import httpx

from payorch.app import create_app
from payorch.providers.health import RedisHealth
from payorch.runtime import Runtime
from tests.conftest import make_settings
from tests.needs import missing
from tests.providers.helpers import A, B, checkout, create_intent, mock_sandbox, set_fault

REDIS_URL = "redis://127.0.0.1:6379/0"


async def redis_health(runtime: Runtime, prefix: str) -> RedisHealth:
    health = RedisHealth.from_url(
        REDIS_URL,
        runtime.clock,
        runtime.settings.provider_failure_threshold,
        runtime.settings.provider_skip_seconds,
        prefix=prefix,
    )
    try:
        await health._redis.ping()
    except Exception as exc:  # noqa: BLE001
        await health.aclose()
        missing(f"Redis is unreachable ({exc})")
    return health


async def test_a_provider_skipped_on_one_replica_is_skipped_on_another(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    prefix = f"payorch-test-{secrets.token_hex(6)}:"
    runtime._provider_health = await redis_health(runtime, prefix)
    replica = Runtime.build(
        make_settings(database_url, redis_url=REDIS_URL),
        clock=runtime.clock,
        database=runtime.database,
    )
    replica._provider_health = await redis_health(replica, prefix)
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
        store = runtime._provider_health
        keys = [k async for k in store._redis.scan_iter(match=prefix + "*")]
        if keys:
            await store._redis.delete(*keys)
        await replica.close()
