"""Automatic disabling through HTTP: an endpoint whose every attempt failed for the configured
time and at least the configured number of attempts is disabled, its deliveries pause, the
application's other endpoints get `webhook_endpoint.disabled`, the endpoint shows why and since
when, and enabling it resumes."""

from __future__ import annotations

import httpx
import orjson
import pytest

from payorch.clock import isoformat
from tests.kit import Sandbox
from tests.webhooks.helpers import (
    AUTO_DISABLE,
    BASE,
    HOUR,
    Hooks,
    create_endpoint,
    create_intent,
    deliveries_of,
)

# Retries every hour; disabled after a day of failures with at least 4 failed attempts.
pytestmark = pytest.mark.settings(**AUTO_DISABLE)


async def _endpoint(client: httpx.AsyncClient, app: Sandbox, endpoint_id: str) -> dict[str, object]:
    response = await client.get(f"{BASE}/{endpoint_id}", headers=app.headers)
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_an_endpoint_failing_long_enough_is_disabled_and_others_are_told(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    dead_id, _ = await create_endpoint(client, sandbox, receiver.url("/status/500"))
    other_id, _ = await create_endpoint(
        client, sandbox, receiver.url("/other"), ["webhook_endpoint.disabled"]
    )
    first_failure = clock.now()
    for n in range(8):  # a new event every 4 hours: 2 failing deliveries in flight of retries
        await create_intent(client, sandbox, f"order-{n}")
        for _ in range(4):
            await deliveries.run_until_idle(runtime)
            clock.advance(HOUR)
    # 32 hours of failures, far more than 4 attempts: disabled at the first attempt past 24 h.
    shown = await _endpoint(client, sandbox, dead_id)
    assert shown["enabled"] is False and shown["disabled_reason"] == "failing"
    assert isinstance(shown["disabled_at"], str)
    assert shown["disabled_at"] >= isoformat(first_failure.replace(microsecond=0))
    assert (await _endpoint(client, sandbox, other_id))["disabled_reason"] is None

    # Its queued deliveries pause; nothing more is sent to it, however long we wait.
    pending = [d for d in await deliveries_of(client, sandbox, dead_id) if d["status"] == "PENDING"]
    assert pending and all(d["next_attempt_at"] is None for d in pending)
    sent = len(receiver.at("/status/500"))
    clock.advance(48 * HOUR)
    await deliveries.run_until_idle(runtime)
    assert len(receiver.at("/status/500")) == sent

    # The other endpoint was told, once, with why and since when.
    [notice] = receiver.at("/other")
    body = orjson.loads(notice.body)
    assert body["type"] == "webhook_endpoint.disabled"
    assert body["data"]["webhook_endpoint_id"] == dead_id
    assert body["data"]["reason"] == "failing"
    assert body["data"]["failed_attempts"] >= 4
    assert "payment_intent_id" not in body["data"]
    listed = await client.get(
        "/v1/events", params={"type": "webhook_endpoint.disabled"}, headers=sandbox.headers
    )
    assert listed.status_code == 200, listed.text
    assert [orjson.loads(orjson.dumps(e))["id"] for e in listed.json()["items"]] == [body["id"]]

    # Enabling resumes: the paused deliveries are due at once and the streak starts afresh.
    await client.patch(
        f"{BASE}/{dead_id}",
        json={"url": receiver.url("/ok"), "enabled": True},
        headers=sandbox.headers,
    )
    shown = await _endpoint(client, sandbox, dead_id)
    assert shown["enabled"] is True
    assert shown["disabled_reason"] is None and shown["disabled_at"] is None
    assert await deliveries.run_until_idle(runtime) == len(pending)
    assert len(receiver.at("/ok")) == len(pending)


async def test_a_success_ends_the_streak_and_few_attempts_never_disable(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    flaky_id, _ = await hooks.queued("/status/503", "a")
    for _ in range(3):  # 3 failures over 20 hours
        await deliveries.run_until_idle(runtime)
        clock.advance(10 * HOUR)
    # A 2xx ends the streak: more failures later start a new one, not yet a day old.
    await client.patch(f"{BASE}/{flaky_id}", json={"url": receiver.url("/ok")}, headers=sandbox.headers)
    await create_intent(client, sandbox, "b")
    await deliveries.run_until_idle(runtime)
    await client.patch(
        f"{BASE}/{flaky_id}", json={"url": receiver.url("/status/503")}, headers=sandbox.headers
    )
    await create_intent(client, sandbox, "c")
    for _ in range(4):
        await deliveries.run_until_idle(runtime)
        clock.advance(5 * HOUR)
    shown = await _endpoint(client, sandbox, flaky_id)
    assert shown["enabled"] is True and shown["disabled_reason"] is None

    # A manual disable shows as such.
    await client.patch(f"{BASE}/{flaky_id}", json={"enabled": False}, headers=sandbox.headers)
    shown = await _endpoint(client, sandbox, flaky_id)
    assert shown["disabled_reason"] == "manual" and shown["disabled_at"] == isoformat(clock.now())


async def test_an_old_streak_with_too_few_attempts_is_not_disabled(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    # Both limits must hold: a streak past the day with 3 attempts (fewer than 4) stays enabled.
    slow_id, _ = await hooks.queued("/status/500", "rare")
    for _ in range(3):  # attempts at 0 h, 13 h and 26 h: the third is past 24 h
        assert await deliveries.run_until_idle(runtime) == 1
        clock.advance(13 * HOUR)
    assert len(receiver.at("/status/500")) == 3
    shown = await _endpoint(client, sandbox, slow_id)
    assert shown["enabled"] is True and shown["disabled_reason"] is None
    # The fourth failed attempt meets the count too: now it is disabled.
    assert await deliveries.run_until_idle(runtime) == 1
    shown = await _endpoint(client, sandbox, slow_id)
    assert shown["enabled"] is False and shown["disabled_reason"] == "failing"


@pytest.mark.parametrize(
    "settings_overrides",
    [{"webhook_retry_schedule": "10,10,10,10,10,10", "webhook_timeout_seconds": 5.0}],
)
async def test_the_circuit_breaker_holds_a_failing_endpoint_then_probes_it(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url("/status/502"))
    for n in range(10):
        await create_intent(client, sandbox, f"order-{n}")
    assert await deliveries.run_until_idle(runtime) == 10  # 10 quick failures: not yet held
    clock.advance(61)
    # Their retries fail too: 20 failures in a row over a minute open the breaker.
    assert await deliveries.run_until_idle(runtime) == 10
    failures = len(receiver.at("/status/502"))
    assert failures == 20
    # Open: nothing is attempted for 30 s, though deliveries are due.
    await create_intent(client, sandbox, "held")
    clock.advance(29)
    assert await deliveries.run_until_idle(runtime) == 0
    assert len(receiver.at("/status/502")) == failures
    # Then one attempt at a time: the probe fails and holds it again.
    clock.advance(1)
    assert await deliveries.run_once(runtime) == 1
    await deliveries.settle()
    assert await deliveries.run_until_idle(runtime) == 0
    # The endpoint is fixed: the next probe gets a 2xx and closes the breaker; the rest flow.
    await client.patch(f"{BASE}/{endpoint_id}", json={"url": receiver.url("/fixed")}, headers=sandbox.headers)
    clock.advance(30)
    assert await deliveries.run_until_idle(runtime) == 11
    assert all(d["status"] == "SUCCEEDED" for d in await deliveries_of(client, sandbox, endpoint_id))
