"""Benchmark: the dashboard's payments page and intent page with 1,000,000 intents on PostgreSQL.

    PYTHONPATH=src:. python -m bench.dashboard_pages [--admin-url postgresql://postgres@127.0.0.1:5432/test]
        [--intents 1000000] [--requests 200] [--keep]

Creates one PostgreSQL database (payorch_bench_<hex>_dashboard), migrates it and seeds one
application with that many authorized payments and their intents (bench/seed_payments.py, COPY,
spread over the past year). Signs in through the sign-in form, then times sequential page loads
through the whole ASGI stack in-process (middlewares, session lookup, queries, Jinja2; no
network): the payments page (first page, pages deep in the list by random cursor, a status
filter, a search by external reference) and the intent page of random intents; the overview is
timed too, for information. Prints one JSON line per scenario (p50, p95 in ms) and drops the
database at the end (unless --keep).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import secrets
import time

import asyncpg
import httpx

from bench.kit import SECRET_KEY as SECRET
from bench.kit import create_database, drop_database, summary
from bench.seeding import seed
from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import Settings


async def sample_ids(url: str, application_id: str, count: int) -> list[str]:
    """Random intent ids of the application, each with at least 20 older ones."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT id FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM payment_intents "
            "WHERE application_id = $1) t WHERE n > 20 ORDER BY random() LIMIT $2",
            application_id,
            count,
        )
    finally:
        await conn.close()
    return [row["id"] for row in rows]


async def sign_in(client: httpx.AsyncClient, api_key: str) -> None:
    form = await client.get("/dashboard/sign-in")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert token, form.text
    answer = await client.post("/dashboard/sign-in", data={"csrf": token.group(1), "api_key": api_key})
    assert answer.status_code == 303, answer.text


async def main_async(admin: str, count: int, requests: int, keep: bool) -> None:
    name = f"payorch_bench_{secrets.token_hex(4)}_dashboard"
    url = await create_database(admin, name, migrate=True)
    runtime = None
    try:
        started = time.perf_counter()
        seeded = await seed(url, count, None)
        seconds = round(time.perf_counter() - started, 1)
        print(
            json.dumps({"database": name, "intents": seeded["payments"], "seed_seconds": seconds}), flush=True
        )
        settings = Settings.model_validate(
            {
                "database_url": url,
                "secret_key": SECRET,
                "rate_limit": "1000000/second",
                "dashboard_sign_in_rate_limit": "1000/second",
                "simulator_enabled": False,
            }
        )
        runtime = build_runtime(settings)
        ids = await sample_ids(url, str(seeded["application_id"]), requests)
        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            await sign_in(client, str(seeded["api_key"]))
            scenarios = {
                "payments_first_page": lambda i: "/dashboard/payments",
                "payments_deep_page": lambda i: f"/dashboard/payments?cursor={ids[i % len(ids)]}",
                "payments_status_filter": lambda i: "/dashboard/payments?status=REFUNDED",
                "payments_search": lambda i: f"/dashboard/payments?q=order-{random.randrange(count)}",
                "intent_page": lambda i: f"/dashboard/payments/{ids[i % len(ids)]}",
                "overview": lambda i: "/dashboard/overview",
            }
            samples: dict[str, list[float]] = {key: [] for key in scenarios}
            for rounds, keep_samples in ((20, False), (requests, True)):  # warm up, then time
                for i in range(rounds):
                    for key, path in scenarios.items():
                        begun = time.perf_counter()
                        response = await client.get(path(i))
                        elapsed = (time.perf_counter() - begun) * 1000
                        assert response.status_code == 200, (path(i), response.status_code)
                        if keep_samples:
                            samples[key].append(elapsed)
            for key, values in samples.items():
                print(json.dumps({"scenario": key, **summary(values, (50, 95))}), flush=True)
    finally:
        if runtime is not None:
            await runtime.close()
        if not keep:
            await drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--intents", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    asyncio.run(main_async(args.admin_url, args.intents, args.requests, args.keep))


if __name__ == "__main__":
    main()
