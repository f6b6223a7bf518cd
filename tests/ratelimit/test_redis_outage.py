"""Redis hung (CLIENT PAUSE) or stopped (killed), through HTTP with PAYORCH_REDIS_URL set: every use
of Redis (API rate limit, dashboard sign-in limit, simulator public limit, provider health) still
answers, never 500, and counts in this process until Redis is back; then the limits are shared by
the replicas again. A Redis of the test's own (tests/ratelimit/own_redis.py), so pausing it stalls
no other test.

What keeps a request from waiting on a hung Redis is checked as behaviour, not as time (a test
does not time the service; bench/redis_outage.py measures it): how many uses reached Redis after
it broke. Stopped, the first refusal opens the circuit; hung, the PAYORCH_REDIS_TIMEOUTS_TO_SKIP-th
timeout in a row does (each bounded by PAYORCH_REDIS_TIMEOUT_SECONDS); every later use skips
Redis. The circuits run on a clock of the test's (``Uses``), so no probe comes in the middle."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.db import Database
from payorch.redis_client import Circuit
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
BATCH = 20
REPLICA_TIMEOUT_SECONDS = 0.2
REPLICA_RETRY_SECONDS = 1.0  # on the test's clock (Uses): a probe only when the test moves it
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


class Uses(Circuit):
    """A runtime's Redis circuit on a clock the test moves (``later``), counting the uses it let
    through to Redis (``reached``)."""

    def __init__(self, runtime: Runtime, retry_seconds: float) -> None:
        self.clock = 0.0
        super().__init__(retry_seconds, runtime.settings.redis_timeouts_to_skip, now=lambda: self.clock)
        self.reached = 0
        assert runtime.redis is not None
        runtime.redis.circuit = self

    def admit(self) -> bool:
        admitted = super().admit()
        self.reached += admitted
        return admitted

    def later(self, seconds: float) -> None:
        self.clock += seconds


def break_redis(server: OwnRedis, how: str, *circuits: Uses) -> None:
    if how == "paused":
        server.pause(PAUSE_SECONDS)
    else:
        server.stop()
    for circuit in circuits:
        circuit.reached = 0


def reaching_a_broken_redis(runtime: Runtime, how: str) -> int:
    """How many uses reach Redis once it broke, before the circuit opens: stopped, the first
    (refused at once); hung, PAYORCH_REDIS_TIMEOUTS_TO_SKIP of them (each waits its timeout)."""
    return runtime.settings.redis_timeouts_to_skip if how == "paused" else 1


@pytest.fixture
def uses(runtime: Runtime) -> Uses:
    return Uses(runtime, RETRY_SECONDS)


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_creates_skip_redis_once_it_is_down(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, own_redis: OwnRedis, uses: Uses, how: str
) -> None:
    body = intent_body(sandbox)
    assert (await client.get("/v1/payments", headers=sandbox.headers)).status_code == 200
    assert uses.reached == 1 and not uses.is_open  # Redis counted it
    break_redis(own_redis, how, uses)
    for n in range(BATCH):
        created = await client.post(
            "/v1/payment-intents",
            json={**body, "external_reference": f"order-{n}"},
            headers=sandbox.headers,
        )
        assert created.status_code == 201, created.text
        assert "RateLimit-Limit" in created.headers  # still counted, in this process
    # The first creates waited for Redis (one each); the other 17 or 19 did not touch it.
    assert uses.reached == reaching_a_broken_redis(runtime, how) and uses.is_open
    assert await circuit_state(client) == "payorch_redis_circuit_state 1.0"


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_dashboard_sign_in_works_while_redis_is_down(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, own_redis: OwnRedis, uses: Uses, how: str
) -> None:
    await sign_in(client, sandbox)  # the owner, made and enrolled (no sign-in attempt counted)
    person = person_of(sandbox)
    client.cookies.clear()
    break_redis(own_redis, how, uses)
    # Each POST counts an attempt of the address in the limiter: each answers (303, not 500).
    first = await password_step(client, person.email, person.password)
    assert first.status_code == 303, first.text
    page = await client.get("/dashboard/sign-in/second-factor")
    second = await client.post(
        "/dashboard/sign-in/second-factor",
        data={"csrf": csrf_of(page), "code": code_now(client, person.totp_secret)},
    )
    assert second.status_code == 303, second.text
    assert (await client.get("/dashboard/overview")).status_code == 200
    # The two POSTs are the limiter's two uses. Paused, each waited its timeout, and two in a
    # row do not open the circuit (PAYORCH_REDIS_TIMEOUTS_TO_SKIP, 3); stopped, the first
    # refusal opened it and the second skipped Redis.
    assert runtime.settings.redis_timeouts_to_skip == 3
    assert (uses.reached, uses.is_open) == ((2, False) if how == "paused" else (1, True))


async def test_provider_health_counts_in_this_process_while_redis_is_stopped(
    client: httpx.AsyncClient, runtime: Runtime, own_redis: OwnRedis, uses: Uses
) -> None:
    sandbox = await mock_sandbox(runtime)
    break_redis(own_redis, "stopped", uses)
    await set_fault(client, sandbox, A, "error")
    for _ in range(runtime.settings.provider_failure_threshold):
        intent = await create_intent(client, sandbox)
        response = await checkout(client, sandbox, intent["id"])
        # Two provider calls (A fails, B answers); the refused connection skips Redis at once.
        assert response.status_code == 200 and response.json()["provider"] == B, response.text
    assert uses.reached == 1 and uses.is_open
    await set_fault(client, sandbox, A, "ok")
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"])
    # A is skipped: this process remembered its failures while Redis could not.
    assert response.status_code == 200 and response.json()["provider"] == B, response.text


@pytest.mark.parametrize("how", ["paused", "stopped"])
async def test_simulator_public_writes_are_limited_in_this_process_while_redis_is_down(
    client: httpx.AsyncClient, runtime: Runtime, own_redis: OwnRedis, uses: Uses, how: str
) -> None:
    break_redis(own_redis, how, uses)
    for _ in range(3):
        written = await client.post(A_API, json=PUBLIC_WRITE, headers=PUBLIC_A)
        assert written.status_code == 200, written.text
    refused = await client.post(A_API, json=PUBLIC_WRITE, headers=PUBLIC_A)
    assert refused.status_code == 429, refused.text
    assert uses.reached == reaching_a_broken_redis(runtime, how) and uses.is_open


@pytest.fixture
async def replicas(
    database_url: str, database: Database, clock: FrozenClock, own_redis: OwnRedis
) -> AsyncIterator[tuple[list[Runtime], list[httpx.AsyncClient]]]:
    """Two API processes (replicas) sharing the test's Redis, 3 requests a minute per application."""
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
        yield runtimes, clients
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
    replicas: tuple[list[Runtime], list[httpx.AsyncClient]], own_redis: OwnRedis, how: str
) -> None:
    runtimes, clients = replicas
    runtime = runtimes[0]
    circuits = [Uses(rt, REPLICA_RETRY_SECONDS) for rt in runtimes]
    before = await new_application(runtime)
    assert await alternating(clients, before, 4) == [200, 200, 200, 429]  # one shared budget

    break_redis(own_redis, how, *circuits)
    during = await new_application(runtime)
    # Each replica enforces the 3 a minute by itself: twice the setting in all.
    assert await alternating(clients, during, 12) == [200] * 6 + [429] * 6
    # Only each replica's first requests reached Redis: paused, the three timeouts in a row that
    # open its circuit; stopped, the first refusal. The rest of the 12 skipped it.
    assert [c.reached for c in circuits] == [reaching_a_broken_redis(runtime, how)] * 2
    assert all(c.is_open for c in circuits)
    assert await circuit_state(clients[0]) == "payorch_redis_circuit_state 1.0"

    if how == "paused":
        await asyncio.sleep(own_redis.pause_left())  # CLIENT UNPAUSE would wait for it too
    else:
        own_redis.start()
    for circuit in circuits:
        circuit.later(REPLICA_RETRY_SECONDS)  # the next use of each is a probe
    after = await new_application(runtime)
    assert await alternating(clients, after, 5) == [200, 200, 200, 429, 429]
    assert await circuit_state(clients[0]) == "payorch_redis_circuit_state 0.0"


async def test_one_slow_redis_answer_does_not_skip_redis_and_timeouts_in_a_row_do(
    replicas: tuple[list[Runtime], list[httpx.AsyncClient]], own_redis: OwnRedis
) -> None:
    """A loaded host answers late now and then: one timeout (of REPLICA_TIMEOUT_SECONDS) costs
    its request the wait and is counted in the process, but the limit stays shared; the
    PAYORCH_REDIS_TIMEOUTS_TO_SKIP-th in a row (3) skips Redis."""
    runtime = replicas[0][0]
    one, other = replicas[1]
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
