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

from bench.kit import create_database, drop_database, summary
from bench.listing import Target
from bench.seeding import seed


async def run_rounds(targets: list[Target], requests: int) -> None:
    """Interleave the targets request by request, so machine load hits them alike."""
    for i in range(requests):
        for target in targets:
            await target.get("first_page", "/v1/payments?limit=100")
            await target.get("deep_pages", target.deep[i % len(target.deep)])
            await target.get("status_filter", "/v1/payments?limit=100&status=REFUNDED")
            await target.get("intents_first_page", "/v1/payment-intents?limit=100")
            await target.get("intents_deep_pages", target.deep_intents[i % len(target.deep_intents)])
            await target.get("intents_status_filter", "/v1/payment-intents?limit=100&status=REFUNDED")
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
            targets.append(Target(str(size), url, str(seeded["application_id"]), str(seeded["api_key"])))
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
