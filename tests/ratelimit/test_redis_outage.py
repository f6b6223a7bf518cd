"""Redis hung (CLIENT PAUSE) or stopped (killed), through HTTP with PAYORCH_REDIS_URL set: every use
of Redis (API rate limit, dashboard sign-in limit, simulator public limit, provider health) costs a
request at most tens of milliseconds, never answers 500, and counts in this process until Redis
is back; then the limits are shared by the replicas again. A Redis of the test's own
(tests/ratelimit/own_redis.py), so pausing it stalls no other test."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable

import httpx
import pytest

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.db import Database
from payorch.runtime import Runtime
from payorch.simulator.provider_a.credentials import PUBLIC_A_API_KEY, PUBLIC_A_COMMERCE_CODE
from tests.dashboard.signing import code_now, csrf_of, password_step, person_of, sign_in
from tests.kit import Sandbox, intent_body, make_settings, mock_sandbox, new_application
from tests.providers.helpers import A, B, checkout, create_intent, set_fault
from tests.ratelimit.own_redis import OwnRedis
from tests.simulator.helpers import A_API

pytestmark = pytest.mark.slow

PAUSE_SECONDS = 3.0
RETRY_SECONDS = 0.3  # PAYORCH_REDIS_RETRY_SECONDS here: one probe of Redis after this long
# A request that reaches a hung Redis waits at most PAYORCH_REDIS_TIMEOUT_SECONDS (0.05 by
# default); the others skip Redis. Generous bounds for a loaded test machine, far below the pause.
ONE_REQUEST_SECONDS = 0.5
BATCH = 20
BATCH_SECONDS = 2.0
REPLICA_TIMEOUT_SECONDS = 0.2
REPLICA_RETRY_SECONDS = 1.0  # longer than the outage below takes: no probe in the middle
PUBLIC_A = {"Tbk-Api-Key-Id": PUBLIC_A_COMMERCE_CODE, "Tbk-Api-Key-Secret": PUBLIC_A_API_KEY}
PUBLIC_WRITE = {"buy_order": "o-1", "session_id": "s", "amount": 1000, "return_url": "https://x.example/r"}


@pytest.fixture
def settings_overrides(own_redis: OwnRedis) -> dict[str, object]:
    return {
        "redis_url": own_redis.url,
        "redis_retry_seconds": RETRY_SECONDS,
        "redis_timeout_seconds": 0.05,  # the default, which tests/conftest.py raises for other tests
        "simulator_public_rate_limit": "3/minute",
    }


def break_redis(server: OwnRedis, how: str) -> None:
    if how == "paused":
        server.pause(PAUSE_SECONDS)
    else:
        server.stop()


async def timed(request: Awaitable[httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    response = await request
    return response, time.perf_counter() - started


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_creates_cost_tens_of_milliseconds_while_redis_is_down(
    client: httpx.AsyncClient, sandbox: Sandbox, own_redis: OwnRedis, how: str
) -> None:
    body = intent_body(sandbox)
    assert (await client.get("/v1/payments", headers=sandbox.headers)).status_code == 200
    break_redis(own_redis, how)
    started = time.perf_counter()
    slowest = 0.0
    for n in range(BATCH):
        created, seconds = await timed(
            client.post(
                "/v1/payment-intents",
                json={**body, "external_reference": f"order-{n}"},
                headers=sandbox.headers,
            )
        )
        assert created.status_code == 201, created.text
        assert "RateLimit-Limit" in created.headers  # still counted, in this process
        slowest = max(slowest, seconds)
    elapsed = time.perf_counter() - started
    assert elapsed < BATCH_SECONDS and slowest < ONE_REQUEST_SECONDS, (elapsed, slowest)


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_dashboard_sign_in_works_while_redis_is_down(
    client: httpx.AsyncClient, sandbox: Sandbox, own_redis: OwnRedis, how: str
) -> None:
    await sign_in(client, sandbox)  # the owner, made and enrolled (no sign-in attempt counted)
    person = person_of(sandbox)
    client.cookies.clear()
    break_redis(own_redis, how)
    # Each POST counts an attempt of the address in the limiter: each answers (303, not 500)
    # with no wait for Redis; the password's includes one argon2 check.
    started = time.perf_counter()
    first = await password_step(client, person.email, person.password)
    assert first.status_code == 303, first.text
    assert time.perf_counter() - started < 2 * ONE_REQUEST_SECONDS
    page = await client.get("/dashboard/sign-in/second-factor")
    started = time.perf_counter()
    second = await client.post(
        "/dashboard/sign-in/second-factor",
        data={"csrf": csrf_of(page), "code": code_now(client, person.totp_secret)},
    )
    assert second.status_code == 303, second.text
    assert time.perf_counter() - started < ONE_REQUEST_SECONDS
    assert (await client.get("/dashboard/overview")).status_code == 200


async def test_provider_health_counts_in_this_process_while_redis_is_stopped(
    client: httpx.AsyncClient, runtime: Runtime, own_redis: OwnRedis
) -> None:
    sandbox = await mock_sandbox(runtime)
    own_redis.stop()
    await set_fault(client, sandbox, A, "error")
    for _ in range(runtime.settings.provider_failure_threshold):
        intent = await create_intent(client, sandbox)
        started = time.perf_counter()
        response = await checkout(client, sandbox, intent["id"])
        assert response.status_code == 200 and response.json()["provider"] == B, response.text
        # Two provider calls (A fails, B answers) with no wait for the stopped Redis: a
        # refused connection skips it at once. Twice the one-request bound: on SQLite with both
        # cores busy such a checkout took 0.66 s in a full CI run.
        assert time.perf_counter() - started < 2 * ONE_REQUEST_SECONDS
    await set_fault(client, sandbox, A, "ok")
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"])
    # A is skipped: this process remembered its failures while Redis could not.
    assert response.status_code == 200 and response.json()["provider"] == B, response.text


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_simulator_public_writes_are_limited_in_this_process_while_redis_is_down(
    client: httpx.AsyncClient, own_redis: OwnRedis, how: str
) -> None:
    break_redis(own_redis, how)
    started = time.perf_counter()
    for _ in range(3):
        written = await client.post(A_API, json=PUBLIC_WRITE, headers=PUBLIC_A)
        assert written.status_code == 200, written.text
    refused = await client.post(A_API, json=PUBLIC_WRITE, headers=PUBLIC_A)
    assert refused.status_code == 429, refused.text
    assert time.perf_counter() - started < 4 * ONE_REQUEST_SECONDS


@pytest.fixture
async def replicas(
    database_url: str, database: Database, clock: FrozenClock, own_redis: OwnRedis
) -> AsyncIterator[tuple[Runtime, list[httpx.AsyncClient]]]:
    """Two API processes (replicas) sharing the test's Redis, 3 requests a minute per application.
    A longer timeout than the default, so that skipping Redis shows in the time taken."""
    settings = make_settings(
        database_url,
        redis_url=own_redis.url,
        rate_limit="3/minute",
        redis_retry_seconds=REPLICA_RETRY_SECONDS,
        redis_timeout_seconds=REPLICA_TIMEOUT_SECONDS,
    )
    runtimes = [build_runtime(settings, clock=clock, database=database) for _ in range(2)]
    clients = [
        httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(runtime=rt)), base_url="http://t")
        for rt in runtimes
    ]
    try:
        yield runtimes[0], clients
    finally:
        for http in clients:
            await http.aclose()
        for rt in runtimes:
            await rt.close()


async def alternating(clients: list[httpx.AsyncClient], app: Sandbox, count: int) -> list[int]:
    return [(await clients[n % 2].get("/v1/payments", headers=app.headers)).status_code for n in range(count)]


async def circuit_state(http: httpx.AsyncClient) -> str:
    metrics = (await http.get("/metrics")).text
    return next(line for line in metrics.splitlines() if line.startswith("payorch_redis_circuit_state"))


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_each_replica_counts_on_its_own_while_redis_is_down_and_they_share_again_after(
    replicas: tuple[Runtime, list[httpx.AsyncClient]], own_redis: OwnRedis, how: str
) -> None:
    runtime, clients = replicas
    before = await new_application(runtime)
    assert await alternating(clients, before, 4) == [200, 200, 200, 429]  # one shared budget

    break_redis(own_redis, how)
    during = await new_application(runtime)
    started = time.perf_counter()
    # Each replica enforces the 3 a minute by itself: twice the setting in all.
    assert await alternating(clients, during, 12) == [200] * 6 + [429] * 6
    # Only each replica's first requests waited for Redis: paused, the three timeouts in a row
    # that open its circuit (6 waits, 1.2 s; 12 would take 2.4 s); stopped, the first refusal.
    assert time.perf_counter() - started < 1.8
    assert await circuit_state(clients[0]) == "payorch_redis_circuit_state 1.0"

    if how == "paused":
        await asyncio.sleep(own_redis.pause_left())
    else:
        own_redis.start()
    await asyncio.sleep(REPLICA_RETRY_SECONDS + 0.1)
    after = await new_application(runtime)
    assert await alternating(clients, after, 5) == [200, 200, 200, 429, 429]
    assert await circuit_state(clients[0]) == "payorch_redis_circuit_state 0.0"


async def test_one_slow_redis_answer_does_not_skip_redis_and_timeouts_in_a_row_do(
    replicas: tuple[Runtime, list[httpx.AsyncClient]], own_redis: OwnRedis
) -> None:
    """A loaded host answers late now and then: one timeout (of REPLICA_TIMEOUT_SECONDS) costs
    its request the wait and is counted in the process, but the limit stays shared; the
    PAYORCH_REDIS_TIMEOUTS_TO_SKIP-th in a row (3) skips Redis."""
    runtime, clients = replicas
    one, other = clients
    assert runtime.redis is not None
    # The circuit of the first replica (the gauge on /metrics is the process's, shared by both
    # replicas here and left by earlier tests).
    circuit = runtime.redis.circuit
    app = await new_application(runtime)
    assert (await one.get("/v1/payments", headers=app.headers)).status_code == 200  # Redis: 1 of 3
    own_redis.pause(0.3)
    late = await one.get("/v1/payments", headers=app.headers)  # times out after 0.2 s
    assert late.status_code == 200, late.text
    await asyncio.sleep(own_redis.pause_left() + 0.05)
    assert not circuit.is_open
    # Still one shared budget: the other replica's two requests use up what Redis counted.
    statuses = [(await other.get("/v1/payments", headers=app.headers)).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]

    fresh = await new_application(runtime)
    assert (await one.get("/v1/payments", headers=fresh.headers)).status_code == 200  # in a row: 0
    own_redis.pause(PAUSE_SECONDS)
    for n in range(runtime.settings.redis_timeouts_to_skip):
        assert not circuit.is_open, n
        await one.get("/v1/payments", headers=fresh.headers)
    assert circuit.is_open
    assert await circuit_state(one) == "payorch_redis_circuit_state 1.0"
