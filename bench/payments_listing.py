"""Benchmark: GET /v1/payments?limit=100 latency with 10,000 and with 1,000,000 payments.

    PYTHONPATH=src python -m bench.payments_listing [--admin-url postgresql://postgres@127.0.0.1:5432/test]
        [--sizes 10000,1000000] [--requests 400] [--keep]

Creates a dedicated PostgreSQL database (payorch_bench_<hex>), migrates it, seeds one
application up to each size with bench/seed_payments.py (COPY), and after each size times
sequential requests through the whole ASGI stack in-process (middleware, API key, rate limit,
query, JSON; no network): the first page, pages deep in the list (random cursors), and a status
filter. Drops the database at the end (unless --keep). Prints a JSON line per size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import time

import asyncpg
import httpx

from bench.seed_payments import seed
from payorch.app import create_app
from payorch.config import Settings
from payorch.db.migrate import upgrade_in_thread
from payorch.payments.service import encode_cursor
from payorch.runtime import Runtime

SECRET = "bench-secret-key-0123456789abcdef0123456789"


async def timed(client: httpx.AsyncClient, headers: dict[str, str], urls: list[str]) -> list[float]:
    out = []
    for url in urls:
        started = time.perf_counter()
        response = await client.get(url, headers=headers)
        out.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text
        assert len(response.json()["items"]) == 100
    return out


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(len(ordered) * 0.95) - 1], 2),
        "n": len(ordered),
    }


async def measure(url: str, api_key: str, application_id: str, requests: int) -> dict[str, object]:
    settings = Settings(  # type: ignore[call-arg]
        database_url=url, secret_key=SECRET, rate_limit="1000000/second", simulator_enabled=False
    )
    runtime = Runtime.build(settings)
    app = create_app(runtime=runtime)
    headers = {"Authorization": f"Bearer {api_key}"}
    conn = await asyncpg.connect(url)
    try:
        # Random positions deep in the list (keep 100 rows below each).
        ids = await conn.fetch(
            "SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM payments "
            "WHERE application_id = $1) t WHERE n > 100 ORDER BY random() LIMIT $2",
            application_id,
            requests,
        )
    finally:
        await conn.close()
    deep = [f"/v1/payments?limit=100&cursor={encode_cursor(r['id'])}" for r in ids]
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://bench"
    ) as client:
        await timed(client, headers, ["/v1/payments?limit=100"] * 50)  # warm up
        first = await timed(client, headers, ["/v1/payments?limit=100"] * requests)
        deep_pages = await timed(client, headers, deep)
        status = await timed(client, headers, ["/v1/payments?limit=100&status=REFUNDED"] * requests)
    await runtime.close()
    return {
        "first_page": summary(first),
        "deep_pages": summary(deep_pages),
        "status_filter": summary(status),
    }


async def main_async(admin: str, sizes: list[int], requests: int, keep: bool) -> None:
    name = f"payorch_bench_{secrets.token_hex(4)}"
    url = admin.rsplit("/", 1)[0] + "/" + name
    conn = await asyncpg.connect(admin)
    await conn.execute(f'CREATE DATABASE "{name}"')
    await conn.close()
    try:
        await asyncio.to_thread(upgrade_in_thread, url)
        application_id, api_key, total = None, None, 0
        results = []
        for size in sizes:
            started = time.perf_counter()
            seeded = await seed(url, size - total, application_id)
            application_id = str(seeded["application_id"])
            api_key = api_key or str(seeded["api_key"])
            total = size
            seconds = round(time.perf_counter() - started, 1)
            result = {"payments": seeded["payments"], "seed_seconds": seconds}
            result.update(await measure(url, api_key, application_id, requests))
            results.append(result)
            print(json.dumps(result), flush=True)
        small, large = results[0], results[-1]
        for key in ("first_page", "deep_pages", "status_filter"):
            ratio = large[key]["p50_ms"] / small[key]["p50_ms"]  # type: ignore[index]
            print(json.dumps({"p50_ratio_" + key: round(ratio, 2)}), flush=True)
    finally:
        if not keep:
            conn = await asyncpg.connect(admin)
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.close()


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
