"""Success rates shared by every API process through Redis (PAYORCH_REDIS_URL): outcomes counted
by one runtime rank the providers of another (SQLite and PostgreSQL, the local Redis)."""

from __future__ import annotations

import httpx
import pytest
import redis.asyncio as redis

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.runtime import Runtime
from tests.kit import make_settings, mock_sandbox
from tests.needs import missing
from tests.providers.helpers import REDIS_URL, A, B
from tests.routing.helpers import C, save_rules
from tests.success_rates.helpers import MEASURED, scores
from tests.success_rates.market import market_payment, set_market

OVERRIDES = {"routing_exploration": 0.0, "routing_window_attempts": 20, "redis_url": REDIS_URL}


@pytest.fixture
async def settings_overrides() -> dict[str, object]:
    probe = redis.from_url(REDIS_URL)
    try:
        await probe.ping()
    except Exception as exc:  # noqa: BLE001
        missing(f"Redis is unreachable ({exc})")
    finally:
        await probe.aclose()
    return OVERRIDES


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_outcomes_counted_by_one_process_rank_providers_in_another(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    await save_rules(client, sandbox, default="success_rate")
    for provider, approve in ((A, 0.0), (B, 1.0), (C, 1.0)):
        await set_market(client, sandbox, provider, approve)
    for _ in range(MEASURED):  # A measured (declines) through this process
        body, status = await market_payment(client, sandbox)
        assert (body["provider"], status) == (A, "FAILED")
        clock.advance(1.5)

    other = build_runtime(make_settings(database_url, **OVERRIDES), clock=clock, database=runtime.database)
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(runtime=other)), base_url="http://testserver"
        ) as replica:
            body, _ = await market_payment(replica, sandbox)
    finally:
        await other.close()
    assert scores(body)[A] == {"rate": 0.0, "attempts": MEASURED}
    assert body["provider"] == B  # B is unmeasured: measured next, A known bad
