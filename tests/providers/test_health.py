"""Provider health: threshold, skip period, one trial call (half-open), in-process and Redis."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest

from payorch.clock import FrozenClock
from payorch.providers.health import Admission, InProcessHealth, ProviderHealth, RedisHealth, health_key
from tests.kit import refused_address
from tests.needs import missing

REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.fixture(params=["in-process", "redis"])
async def health(request: pytest.FixtureRequest, clock: FrozenClock) -> AsyncIterator[ProviderHealth]:
    if request.param == "in-process":
        yield InProcessHealth(clock, threshold=3, skip_seconds=10)
        return
    prefix = f"payorch-test-{secrets.token_hex(6)}:"
    # A generous timeout: this fixture tests the shared state, not Redis latency under a loaded machine
    # (a timed-out call falls back to the in-process store, which knows none of the failures).
    store = RedisHealth.from_url(
        REDIS_URL, clock, threshold=3, skip_seconds=10, prefix=prefix, timeout_seconds=5
    )
    try:
        await store._redis.ping()
    except Exception as exc:  # noqa: BLE001
        await store.aclose()
        missing(f"Redis is unreachable ({exc})")
    try:
        yield store
    finally:
        keys = [k async for k in store._redis.scan_iter(match=prefix + "*")]
        if keys:
            await store._redis.delete(*keys)
        await store.aclose()


async def test_skipped_after_threshold_then_one_trial(health: ProviderHealth, clock: FrozenClock) -> None:
    key = "provider_a_redirect_post:MOCK:cfg_1"
    for _ in range(2):
        await health.failed(key)
        assert (await health.admit(key)).allowed
    await health.failed(key)  # third consecutive failure
    refused = await health.admit(key)
    assert not refused.allowed and refused.retry_after_seconds == 10
    clock.advance(4)
    assert (await health.admit(key)).retry_after_seconds == 6
    assert (await health.admit("other")).allowed  # keys are independent
    clock.advance(6)
    trial = await health.admit(key)
    assert trial.allowed and trial.trial
    assert not (await health.admit(key)).allowed  # while the trial runs, others still skip
    await health.failed(key)  # the trial failed: a new skip period
    assert not (await health.admit(key)).allowed
    clock.advance(10)
    assert (await health.admit(key)).trial
    await health.succeeded(key)  # the trial succeeded: back to normal
    again = await health.admit(key)
    assert again.allowed and not again.trial


async def test_a_success_resets_the_count(health: ProviderHealth) -> None:
    key = "k"
    await health.failed(key)
    await health.failed(key)
    await health.succeeded(key)
    await health.failed(key)
    await health.failed(key)
    assert (await health.admit(key)).allowed


async def test_concurrent_admits_give_one_trial(health: ProviderHealth, clock: FrozenClock) -> None:
    for _ in range(3):
        await health.failed("k")
    clock.advance(11)
    admissions = await asyncio.gather(*(health.admit("k") for _ in range(10)))
    assert sum(a.allowed for a in admissions) == 1


def test_health_key_isolates_mock_connectors() -> None:
    assert health_key("p", "MOCK", "cfg_1") != health_key("p", "MOCK", "cfg_2")
    assert health_key("p", "PRODUCTION", "cfg_1") == health_key("p", "PRODUCTION", "cfg_2")


async def test_redis_down_means_health_is_kept_in_this_process(clock: FrozenClock) -> None:
    with refused_address() as address:
        store = RedisHealth.from_url(f"redis://{address}/0", clock, threshold=1, skip_seconds=10)
        try:
            await store.failed("k")  # Redis refused: counted here, not raised
            assert not (await store.admit("k")).allowed
            clock.advance(11)
            assert (await store.admit("k")).trial
            await store.succeeded("k")
            assert (await store.admit("k")) == Admission(True)
        finally:
            await store.aclose()


def _gauge(provider: str) -> float | None:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("payorch_provider_health_state", {"provider": provider})


async def test_the_gauge_is_skipped_while_any_key_of_the_provider_is(
    health: ProviderHealth, clock: FrozenClock
) -> None:
    provider = f"provider_gauge_{secrets.token_hex(3)}"
    one, two = f"{provider}:MOCK:cfg_1", f"{provider}:MOCK:cfg_2"
    for _ in range(2):
        await health.failed(one)
    assert _gauge(provider) is None  # below the threshold: nothing changed, nothing set
    await health.failed(one)
    assert _gauge(provider) == 1
    for _ in range(3):
        await health.failed(two)
    await health.succeeded(one)
    assert _gauge(provider) == 1  # two is still skipped
    clock.advance(11)
    assert (await health.admit(two)).trial
    assert _gauge(provider) == 1  # half-open is still skipped
    await health.succeeded(two)
    assert _gauge(provider) == 0


async def test_a_replica_sees_through_redis_what_another_tripped(clock: FrozenClock) -> None:
    prefix = f"payorch-test-{secrets.token_hex(6)}:"
    first = RedisHealth.from_url(REDIS_URL, clock, threshold=2, skip_seconds=10, prefix=prefix)
    second = RedisHealth.from_url(REDIS_URL, clock, threshold=2, skip_seconds=10, prefix=prefix)
    provider = f"provider_gauge_{secrets.token_hex(3)}"
    key = f"{provider}:PRODUCTION"
    try:
        try:
            await first._redis.ping()
        except Exception as exc:  # noqa: BLE001
            missing(f"Redis is unreachable ({exc})")
        await first.failed(key)
        await first.failed(key)  # tripped by the first replica
        # The gauge is per process; tests share one, so reset it to see the second's view.
        from payorch.observability.metrics import HealthState as State
        from payorch.observability.metrics import set_provider_health

        set_provider_health(provider, State.AVAILABLE)
        assert not (await second.admit(key)).allowed
        assert _gauge(provider) == 1  # the second learnt it from Redis's answer
        clock.advance(11)
        assert (await first.admit(key)).trial
        await first.succeeded(key)  # the first's trial brought it back
        set_provider_health(provider, State.SKIPPED)
        assert (await second.admit(key)).allowed
        assert _gauge(provider) == 0  # and the second sees it on its next admission
    finally:
        keys = [k async for k in first._redis.scan_iter(match=prefix + "*")]
        if keys:
            await first._redis.delete(*keys)
        await first.aclose()
        await second.aclose()


async def test_skipped_until_reads_without_starting_a_trial(
    health: ProviderHealth, clock: FrozenClock
) -> None:
    """What the dashboard shows: when a skipped provider gets its next trial; None when available."""
    key = "provider_b_redirect_get:MOCK:cfg_2"
    assert await health.skipped_until(key) is None
    for _ in range(3):
        await health.failed(key)
    until = await health.skipped_until(key)
    assert until is not None and until.timestamp() == pytest.approx(clock.now().timestamp() + 10, abs=0.01)
    clock.advance(10)
    assert await health.skipped_until(key) is None  # the period is over: the next call is the trial
    assert (await health.admit(key)).trial  # reading did not take the trial
    await health.succeeded(key)
    assert await health.skipped_until(key) is None
