"""Routing decisions: (b) how a 70/30 split lands over many intents, (c) what a decision costs
in-process beside a create.

    PYTHONPATH=src:. python -m bench.routing_decisions [--postgres] [--decisions 10000] [--samples 2000]

A throwaway SQLite database (and, with --postgres, a fresh PostgreSQL one on the local server)
with a sandbox merchant (MOCK A, B, C) and a routing version of two rules: USD to C then B, CLP
split A 70 / B 30.

(b) ``decide`` for --decisions new CLP intent ids: the share each provider got first.
(c) p50 and p99 of, sequentially, --samples times each:
    - ``decide`` alone (rules matched, split picked: CPU only);
    - the routing a checkout adds: reading the active version and ``decide``;
    - POST /v1/payment-intents through the in-process app (httpx's ASGI transport).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable

import httpx

from bench.kit import ADMIN_URL, fresh_database, percentile
from payorch.app import create_app
from payorch.applications.service import create_application
from payorch.auth.service import Caller
from payorch.clock import SystemClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.connectors import service as connectors
from payorch.db.migrate import upgrade_in_thread
from payorch.ids import new_id
from payorch.providers import AUTO
from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.routing import service as routing
from payorch.routing.decide import IntentFacts, decide
from payorch.routing.program import RoutingProgram
from payorch.runtime import Runtime

SECRET = "bench-secret-key-0123456789abcdef0123456789"  # noqa: S105 - a throwaway database
A, B, C = PROVIDER_A, PROVIDER_B, PROVIDER_C
PROGRAM = RoutingProgram.model_validate(
    {
        "default": "priority",
        "rules": [
            {"name": "usd", "if": {"currency": ["USD"]}, "then": {"priority": [C, B]}},
            {
                "name": "spread",
                "if": {"currency": ["CLP"]},
                "then": {"split": [{"provider": A, "weight": 70}, {"provider": B, "weight": 30}]},
            },
        ],
    }
)


def percentiles(samples_us: list[float]) -> str:
    return f"p50={percentile(samples_us, 50):.0f}us p99={percentile(samples_us, 99):.0f}us"


async def timed(samples: int, call: Callable[[], Awaitable[object]]) -> list[float]:
    for _ in range(min(100, samples)):  # warm: caches, connections, compiled statements
        await call()
    found = []
    for _ in range(samples):
        started = time.perf_counter_ns()
        await call()
        found.append((time.perf_counter_ns() - started) / 1000)
    return found


async def merchant(runtime: Runtime) -> tuple[str, str, Caller]:
    clock = SystemClock()
    async with runtime.database.transaction() as conn:
        app = await create_application(conn, clock, name="bench", environment="SANDBOX", merchant_name="shop")
        await connectors.add_mock_connectors(
            conn, clock, application_id=app.application_id, merchant_account_id=app.merchant_account_id
        )
        caller = Caller(application_id=app.application_id, environment="SANDBOX", credential_id="bench")
        await routing.save_version(conn, clock, caller, app.merchant_account_id, PROGRAM)
    return app.api_key, app.merchant_account_id, caller


async def run(label: str, database_url: str, decisions: int, samples: int) -> None:
    await asyncio.to_thread(upgrade_in_thread, database_url)
    runtime = build_runtime(Settings.model_validate(
            {"database_url": database_url, "secret_key": SECRET, "rate_limit": "1000000/second"}
        ))
    try:
        key, merchant_id, _ = await merchant(runtime)
        async with runtime.database.reading() as conn:
            configured = await connectors.merchant_connectors(conn, merchant_id)
            active = await routing.active_program(conn, merchant_id)
        rates = runtime.success_rates

        async def one_decision(intent_id: str) -> str:
            facts = IntentFacts(intent_id, merchant_id, 1990, "CLP", {})
            decision = await decide(facts, configured, active, AUTO, rates)
            return decision.candidates[0].provider

        if decisions:
            shares = Counter([await one_decision(new_id("payi")) for _ in range(decisions)])
            a_share = 100 * shares[A] / decisions
            print(
                f"{label} split 70/30 over {decisions} decisions: A {a_share:.2f} %, "
                f"B {100 * shares[B] / decisions:.2f} % (A off by {a_share - 70:+.2f} points)"
            )

        async def with_read() -> None:
            async with runtime.database.reading() as conn:
                found = await routing.active_program(conn, merchant_id)
            facts = IntentFacts(new_id("payi"), merchant_id, 1990, "CLP", {})
            await decide(facts, configured, found, AUTO, rates)

        body = {
            "merchant_account_id": merchant_id,
            "external_reference": "bench",
            "amount": 1990,
            "currency": "CLP",
            "return_url": "https://shop.example/return",
        }
        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:

            async def create() -> None:
                response = await client.post("/v1/payment-intents", json=body, headers=headers)
                assert response.status_code == 201, response.text

            figures = {
                "decide": await timed(samples, lambda: one_decision(new_id("payi"))),
                "read version + decide": await timed(samples, with_read),
                "create (POST, in-process)": await timed(samples, create),
            }
        for name, found in figures.items():
            print(f"{label} {name:<26} {percentiles(found)} ({samples} sequential)")
    finally:
        await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(run("sqlite", f"sqlite:///{tempfile.mkdtemp()}/bench.db", args.decisions, args.samples))
    if args.postgres:
        with fresh_database(ADMIN_URL, f"bench_routing_{new_id('b')[2:12].lower()}") as url:
            asyncio.run(run("postgresql", url, 0, args.samples))


if __name__ == "__main__":
    main()
