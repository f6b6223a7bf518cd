"""Success-rate routing on the simulated market (docs/performance.md, "Routing by success rate").

    PYTHONPATH=src:. .venv/bin/python -m bench.routing_market [--payments 5000] [--after 5000]

In process (ASGI, one SQLite file in a temp dir, every request through the app as over HTTP):
a SANDBOX application with MOCK connectors for every registered provider routes ``auto`` by
success rate (PUT .../routing {"default": "success_rate"}). The simulated market decides each
checkout (docs/simulator.md, "The simulated market"): A approves 60 %, B 90 %, C 75 %, D 50 %,
the rest declined. CLP, the one currency all of them charge (provider A charges only CLP).

One payment: create the intent, ask for its checkout (routing decides), the market's buyer
decides it (POST /simulator/controls/market/buy), the buyer's return, read the intent. The
runtime's clock is frozen and moved 0.1 s per payment, so the windows (10 s buckets, the
settings' attempts) see 10 payments a second of market time whatever the machine's speed.

Phase 1: ``--payments`` payments; the overall authorization rate beside the best provider's.
Phase 2: B drops to 30 %; payments until routing moved off B (C first in 80 of the last 100) and
until the authorization rate of the last 500 is within 3 points of the new best (C, 75 %);
at most ``--after`` payments.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections import Counter, deque
from pathlib import Path

import httpx

from bench.kit import mock_application
from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.db.migrate import upgrade
from payorch.providers.provider_a import PROVIDER_A
from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registry import PROVIDER_IDS
from payorch.runtime import Runtime

A, B, C, D = PROVIDER_A, PROVIDER_B, PROVIDER_C, PROVIDER_D
MARKET = {A: 0.60, B: 0.90, C: 0.75, D: 0.50}
if set(MARKET) != set(PROVIDER_IDS):  # a provider added to the registry needs its rate here
    raise RuntimeError(f"MARKET names {sorted(MARKET)}, the registry {sorted(PROVIDER_IDS)}")
DROPPED = 0.30
SECONDS_PER_PAYMENT = 0.1
TRAILING = 500
POINTS = 0.03


class Shop:
    def __init__(self, client: httpx.AsyncClient, clock: FrozenClock, merchant: str) -> None:
        self.client = client
        self.clock = clock
        self.merchant = merchant
        self.n = 0

    async def market(self, provider: str, approve: float) -> None:
        body = {"provider": provider, "approve": approve, "decline": round(1 - approve, 6), "give_up": 0, "pending": 0}
        (await self.client.post("/simulator/controls/market", json=body)).raise_for_status()

    async def payment(self) -> tuple[str, bool]:
        """One payment: the provider routing chose, and whether it was authorized."""
        self.n += 1
        self.clock.advance(SECONDS_PER_PAYMENT)
        intent = await self.client.post(
            "/v1/payment-intents",
            json={
                "merchant_account_id": self.merchant,
                "external_reference": f"market-{self.n}",
                "amount": 1990,
                "currency": "CLP",
                "return_url": "https://shop.example/return",
            },
        )
        intent.raise_for_status()
        intent_id = intent.json()["id"]
        answer = await self.client.post(f"/v1/payment-intents/{intent_id}/checkout", json={})
        answer.raise_for_status()
        bought = await self.client.post("/simulator/controls/market/buy", json={"payment_intent_id": intent_id})
        bought.raise_for_status()
        back = bought.json()["return"]
        # The buyer's browser, without our bearer key.
        if back["method"] == "POST":
            await self.client.post(back["url"], data=back["fields"], headers={"Authorization": ""})
        else:
            await self.client.get(back["url"], headers={"Authorization": ""})
        status = (await self.client.get(f"/v1/payment-intents/{intent_id}")).json()["status"]
        return answer.json()["provider"], status == "AUTHORIZED"


async def shop_of(runtime: Runtime, client: httpx.AsyncClient) -> Shop:
    created = await mock_application(runtime, "market")
    client.headers["Authorization"] = f"Bearer {created.api_key}"
    routing = f"/v1/admin/merchant-accounts/{created.merchant_account_id}/routing"
    (await client.put(routing, json={"default": "success_rate", "rules": []})).raise_for_status()
    assert isinstance(runtime.clock, FrozenClock)
    return Shop(client, runtime.clock, created.merchant_account_id)


async def phase_one(shop: Shop, payments: int) -> None:
    chosen: Counter[str] = Counter()
    authorized = 0
    started = time.perf_counter()
    for _ in range(payments):
        provider, ok = await shop.payment()
        chosen[provider] += 1
        authorized += ok
    rate, best = authorized / payments, max(MARKET.values())
    print(
        f"phase 1: {payments} payments in {time.perf_counter() - started:.0f} s; authorized {rate:.4f} "
        f"(best provider {best:.2f}: {100 * (best - rate):.2f} points below); "
        f"routed: {', '.join(f'{p} {n}' for p, n in sorted(chosen.items()))}",
        flush=True,
    )


async def phase_two(shop: Shop, limit: int) -> None:
    await shop.market(B, DROPPED)
    best = max({**MARKET, B: DROPPED}.values())
    last_providers: deque[str] = deque(maxlen=100)
    last_outcomes: deque[bool] = deque(maxlen=TRAILING)
    moved_at = recovered_at = None
    for n in range(1, limit + 1):
        provider, ok = await shop.payment()
        last_providers.append(provider)
        last_outcomes.append(ok)
        if moved_at is None and len(last_providers) == 100 and last_providers.count(C) >= 80:
            moved_at = n
        if len(last_outcomes) == TRAILING and sum(last_outcomes) / TRAILING >= best - POINTS:
            recovered_at = n
            break
    print(
        f"phase 2: B drops to {DROPPED:.2f}; routing moved to C after {moved_at} payments "
        f"(C first in >= 80 of the last 100); authorization rate of the last {TRAILING} within "
        f"{100 * POINTS:.0f} points of {best:.2f} after {recovered_at} payments (limit {limit})",
        flush=True,
    )


async def run(payments: int, after: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        database_url = f"sqlite:///{Path(tmp) / 'market.db'}"
        await asyncio.to_thread(upgrade, database_url)
        settings = Settings(
            database_url=database_url,
            secret_key="bench-secret-key-0123456789abcdef012345",
            public_url="http://testserver",
            rate_limit="1000000/second",
        )
        runtime = build_runtime(settings, clock=FrozenClock())
        try:
            transport = httpx.ASGITransport(app=create_app(runtime=runtime))
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
                shop = await shop_of(runtime, client)
                for provider, approve in MARKET.items():
                    await shop.market(provider, approve)
                print(
                    f"exploration {settings.routing_exploration}, window {settings.routing_window_attempts} "
                    f"attempts / {settings.routing_window_seconds} s; load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
                await phase_one(shop, payments)
                await phase_two(shop, after)
        finally:
            await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=5000)
    parser.add_argument("--after", type=int, default=5000, help="phase 2's most payments")
    args = parser.parse_args()
    asyncio.run(run(args.payments, args.after))


if __name__ == "__main__":
    main()
