"""Provider call metrics and the provider health gauge, driven through the API and the
simulator's faults and read back from /metrics; SQLite and PostgreSQL, in-process and Redis."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.observability import metrics
from payorch.providers.health import RedisHealth
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.observability.scrape import scrape, value
from tests.providers.helpers import (
    A,
    B,
    checkout,
    create_intent,
    forget_redis_keys,
    redis_health,
    redis_prefix,
    set_fault,
)

CALLS = "payorch_provider_call_duration_seconds_count"
ERRORS = "payorch_provider_call_errors_total"
HEALTH = "payorch_provider_health_state"


# The simulator's `timeout` fault answers after provider_timeout_seconds + 1.
pytestmark = pytest.mark.settings(
    provider_timeout_seconds=0.3, provider_failure_threshold=3, provider_skip_seconds=10
)


@pytest.fixture(params=["in-process", "redis"])
def health_store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def provider_health(
    request: pytest.FixtureRequest, clock: FrozenClock, settings_overrides: dict[str, object]
) -> AsyncIterator[RedisHealth | None]:
    """The runtime is built with a Redis store when the test's ``health_store`` is "redis"."""
    if "health_store" not in request.fixturenames or request.getfixturevalue("health_store") != "redis":
        yield None  # the runtime's default: in-process
        return
    prefix = redis_prefix()
    threshold = int(str(settings_overrides["provider_failure_threshold"]))
    skip_seconds = float(str(settings_overrides["provider_skip_seconds"]))
    store = await redis_health(clock, threshold, skip_seconds, prefix)
    try:
        yield store  # closed by the runtime fixture (its pool reconnects for the cleanup below)
    finally:
        await forget_redis_keys(store, prefix)
        await store.aclose()


@pytest.mark.parametrize(("fault", "kind"), [("error", "http_5xx"), ("timeout", "timeout")])
async def test_each_provider_call_is_timed_and_failures_counted_by_kind(
    client: httpx.AsyncClient, runtime: Runtime, fault: str, kind: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, fault)
    before = await scrape(client)
    intent = await create_intent(client, sandbox)
    started = time.monotonic()
    response = await checkout(client, sandbox, intent["id"])
    took = time.monotonic() - started
    assert response.status_code == 200 and response.json()["provider"] == B  # failed over
    after = await scrape(client)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta(CALLS, provider=A, operation="create") == 1
    assert delta(CALLS, provider=B, operation="create") == 1
    assert delta(ERRORS, provider=A, operation="create", kind=kind) == 1
    for other in ("http_5xx", "http_4xx", "timeout", "network", "error", "invalid_response"):
        assert delta(ERRORS, provider=B, operation="create", kind=other) == 0  # B answered
        if other != kind:
            assert delta(ERRORS, provider=A, operation="create", kind=other) == 0
    if kind == "timeout":  # the duration observed is the call's, cut at the timeout
        seconds = value(
            after, "payorch_provider_call_duration_seconds_sum", provider=A, operation="create"
        ) - value(before, "payorch_provider_call_duration_seconds_sum", provider=A, operation="create")
        # At least the timeout, and no more than the whole checkout took (a bound that grows
        # with the machine's load, unlike a fixed one).
        assert 0.25 <= seconds <= took, (seconds, took)


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_the_health_gauge_follows_skipping_and_the_trial(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock, health_store: str
) -> None:
    # The gauge is per process; earlier tests' runtimes may have left A marked skipped.
    metrics.set_provider_health(A, metrics.HealthState.AVAILABLE)
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")

    async def provider_of_new_checkout() -> str:
        intent = await create_intent(client, sandbox)
        response = await checkout(client, sandbox, intent["id"])
        assert response.status_code == 200, response.text
        return str(response.json()["provider"])

    for failures in range(1, 4):
        assert await provider_of_new_checkout() == B
        state = value(await scrape(client), HEALTH, provider=A)
        assert state == (1 if failures == 3 else 0), failures  # skipped at the threshold
    await set_fault(client, sandbox, A, "ok")
    assert await provider_of_new_checkout() == B  # skipped: not even tried
    assert value(await scrape(client), HEALTH, provider=A) == 1
    clock.advance(11)
    assert await provider_of_new_checkout() == A  # the trial call succeeded
    assert value(await scrape(client), HEALTH, provider=A) == 0


async def test_the_call_helper_classifies_every_answer(clock: FrozenClock) -> None:
    """The kinds the simulator cannot produce: a 4xx, a network error, an in-process crash, an
    unparseable answer. Real httpx client over a scripted transport (no socket)."""
    from pydantic import BaseModel

    from payorch.providers.base import ConnectorContext, Credentials, Mode, ProviderUnavailable
    from payorch.providers.http import parse, send

    class Answer(BaseModel):
        token: str

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/refused":
            return httpx.Response(401, json={"error": "bad key"})
        if path == "/unreachable":
            raise httpx.ConnectError("refused", request=request)
        if path == "/crash":
            raise RuntimeError("simulator bug")
        if path == "/garbage":
            return httpx.Response(200, content=b"<html>")
        return httpx.Response(200, json={"token": "t"})

    provider = f"provider_metrics_test_{secrets.token_hex(3)}"
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        ctx = ConnectorContext(
            connector_id="con_test",
            application_id="app_test",
            provider=provider,
            mode=Mode.SANDBOX,
            base_url="http://provider.invalid",
            credentials=Credentials(),
            http=http,
            clock=clock,
            timeout_seconds=5,
        )
        ok = await send(ctx, "ok", "GET", "/ok", headers={})
        assert parse(Answer, ok, "ok", provider).token == "t"
        assert (await send(ctx, "refused", "GET", "/refused", headers={})).status_code == 401
        for operation in ("unreachable", "crash", "garbage"):
            with pytest.raises(ProviderUnavailable):
                response = await send(ctx, operation, "GET", f"/{operation}", headers={})
                parse(Answer, response, operation, provider)

    from prometheus_client import REGISTRY

    def errors(operation: str) -> dict[str, float]:
        found = {}
        for kind in ("http_4xx", "http_5xx", "timeout", "network", "error", "invalid_response"):
            labels = {"provider": provider, "operation": operation, "kind": kind}
            if (count := REGISTRY.get_sample_value(ERRORS, labels)) is not None:
                found[kind] = count
        return found

    for operation in ("ok", "refused", "unreachable", "crash", "garbage"):
        labels = {"provider": provider, "operation": operation}
        assert REGISTRY.get_sample_value(CALLS, labels) == 1, operation  # every call timed
    assert errors("ok") == {}
    assert errors("refused") == {"http_4xx": 1}
    assert errors("unreachable") == {"network": 1}
    assert errors("crash") == {"error": 1}
    assert errors("garbage") == {"invalid_response": 1}
