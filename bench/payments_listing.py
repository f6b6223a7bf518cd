"""Benchmark: GET /v1/payments and /v1/payment-intents (limit=100) latency with 10,000 and
with 1,000,000 payments (each with its intent).

    PYTHONPATH=src:. python -m bench.payments_listing [--admin-url postgresql://postgres@127.0.0.1:5432/test]
        [--sizes 10000,1000000] [--requests 400] [--keep]

Creates one dedicated PostgreSQL database per size (payorch_bench_<hex>_<size>), migrates it
and seeds one application with that many payments (bench/seed_payments.py, COPY); the largest
also gets a second application with 1,000 payments. Then times sequential requests through the
whole ASGI stack in-process (middleware, API key, rate limit, query, JSON; no network), the
databases interleaved request by request so that machine load falls on them alike: the first
page, pages deep in the list (random cursors) and a status filter, of payments and of intents
(intents also: two statuses at once and an exact external_reference). Drops the databases at
the end (unless --keep). Prints a JSON line per target and the p50 ratios largest/smallest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import time
from dataclasses import dataclass, field

import asyncpg
import httpx

from bench.kit import SECRET_KEY, create_database, drop_database, summary
from bench.seed_payments import seed
from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.runtime import Runtime

SECRET = SECRET_KEY


@dataclass
class Target:
    """One database, seeded to a size, with an app served in-process."""

    label: str
    url: str
    application_id: str
    api_key: str
    client: httpx.AsyncClient | None = None
    runtime: Runtime | None = None
    deep: list[str] = field(default_factory=list)
    deep_intents: list[str] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)

    async def open(self, requests: int) -> None:
        settings = Settings(  # type: ignore[call-arg]
            database_url=self.url,
            secret_key=SECRET,
            rate_limit="1000000/second",
            simulator_enabled=False,
        )
        self.runtime = build_runtime(settings)
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(runtime=self.runtime)),
            base_url="http://bench",
        )
        self.deep = await self.deep_pages("payments", "/v1/payments", requests)
        self.deep_intents = await self.deep_pages(
            "payment_intents", "/v1/payment-intents", requests
        )

    async def deep_pages(self, table: str, path: str, requests: int) -> list[str]:
        """Random positions deep in the list (with 100 rows below each)."""
        conn = await asyncpg.connect(self.url)
        try:
            rows = await conn.fetch(
                f"SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM {table} "  # noqa: S608 - a constant
                "WHERE application_id = $1) t WHERE n > 100 ORDER BY random() LIMIT $2",
                self.application_id,
                requests,
            )
        finally:
            await conn.close()
        return [f"{path}?limit=100&cursor={r['id']}" for r in rows]

    async def get(self, scenario: str, url: str) -> None:
        assert self.client is not None
        headers = {"Authorization": f"Bearer {self.api_key}"}
        started = time.perf_counter()
        response = await self.client.get(url, headers=headers)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, response.text
        assert response.json()["items"]  # full pages, but for a small status filter
        self.samples.setdefault(scenario, []).append(elapsed)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
        if self.runtime is not None:
            await self.runtime.close()


async def run_rounds(targets: list[Target], requests: int) -> None:
    """Interleave the targets request by request, so machine load hits them alike."""
    for i in range(requests):
        for target in targets:
            await target.get("first_page", "/v1/payments?limit=100")
            await target.get("deep_pages", target.deep[i % len(target.deep)])
            await target.get("status_filter", "/v1/payments?limit=100&status=REFUNDED")
            await target.get("intents_first_page", "/v1/payment-intents?limit=100")
            await target.get(
                "intents_deep_pages", target.deep_intents[i % len(target.deep_intents)]
            )
            await target.get(
                "intents_status_filter", "/v1/payment-intents?limit=100&status=REFUNDED"
            )
            await target.get(
                "intents_two_statuses",
                "/v1/payment-intents?limit=100&status=REFUNDED&status=PARTIALLY_REFUNDED",
            )
            await target.get(
                "intents_external_reference",
                f"/v1/payment-intents?limit=100&external_reference=order-{i * 7 % 1000}",
            )


async def main_async(admin: str, sizes: list[int], requests: int, keep: bool) -> None:
    tag = secrets.token_hex(4)
    names = [f"payorch_bench_{tag}_{size}" for size in sizes]
    targets: list[Target] = []
    try:
        for size, name in zip(sizes, names, strict=True):
            url = await create_database(admin, name, migrate=True)
            started = time.perf_counter()
            seeded = await seed(url, size, None)
            print(
                json.dumps(
                    {
                        "database": name,
                        "payments": seeded["payments"],
                        "seed_seconds": round(time.perf_counter() - started, 1),
                    }
                ),
                flush=True,
            )
            targets.append(
                Target(str(size), url, str(seeded["application_id"]), str(seeded["api_key"]))
            )
        # A small application beside the million: its pages cost the same as anyone's.
        small = await seed(targets[-1].url, 1000, None)
        targets.append(
            Target(
                f"1000 of {sizes[-1]}",
                targets[-1].url,
                str(small["application_id"]),
                str(small["api_key"]),
            )
        )
        for target in targets:
            await target.open(requests)
        await run_rounds(targets, 30)  # warm up
        for target in targets:
            target.samples.clear()
        await run_rounds(targets, requests)
        for target in targets:
            print(
                json.dumps(
                    {"payments": target.label, **{k: summary(v, (50, 95)) for k, v in target.samples.items()}}
                ),
                flush=True,
            )
        low, high = targets[0], targets[len(sizes) - 1]
        for key in low.samples:
            ratio = statistics.median(high.samples[key]) / statistics.median(low.samples[key])
            print(json.dumps({f"p50_ratio_{key}": round(ratio, 2)}), flush=True)
    finally:
        for target in targets:
            await target.close()
        if not keep:
            for name in names:
                await drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    asyncio.run(main_async(args.admin_url, sizes, args.requests, args.keep))


if __name__ == "__main__":
    main()
