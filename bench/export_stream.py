"""Exporting many payments streams at a steady rate with the server's memory flat.

    PYTHONPATH=src:. python -m bench.export_stream [--payments 1000000] [--format csv|jsonl]
        [--admin-url postgresql://postgres@127.0.0.1:5432/test] [--timeout 900]

A fresh PostgreSQL database; one SANDBOX application whose N payments (and intents) are seeded
directly by two INSERT ... SELECT FROM generate_series statements (ids time-ordered inside one
millisecond, three currencies, one external reference in ten starting with "=" so the CSV guard
works); then `payorch serve --workers 1 --no-worker` and one GET /v1/exports/payments of that
millisecond's second, read as it comes and thrown away. Prints the rows, bytes, seconds, rows/s,
and the serving process's VmRSS (/proc/<pid>/status) before, at its highest while streaming
(sampled every 0.2 s) and after. Figures: docs/performance.md, "Exports".
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import asyncpg
import httpx

from bench.kit import ADMIN_URL, ROOT, fresh_database, sandbox_application, server_env, started_server
from payorch.ids import lowest_id
from payorch.providers.registry import PROVIDER_IDS

# One millisecond's ids: the prefix of its lowest id (the time and one random bit, all zero),
# then 19 digits of n; the alphabet sorts as ASCII, so they all sort inside that millisecond.
_KEEP = len("pay_") + 10

SEED_INTENTS = """
INSERT INTO payment_intents (id, application_id, merchant_account_id, status, external_reference,
    amount, currency, description, requested_provider, provider, return_url, metadata, created_at,
    updated_at)
SELECT $1 || lpad(n::text, 19, '0'), $2, $3, 'AUTHORIZED',
    CASE WHEN n % 10 = 0 THEN '=order-' ELSE 'order-' END || n,
    100 + n % 100000, (ARRAY['USD', 'CLP', 'EUR'])[1 + n % 3], NULL, 'auto', $4,
    'https://shop.example/return', '{}'::jsonb, $5, $5
FROM generate_series(1, $6::int) AS n
"""
SEED_PAYMENTS = """
INSERT INTO payments (id, application_id, payment_intent_id, merchant_account_id,
    external_reference, status, amount, refunded_amount, currency, provider, provider_reference,
    authorization_code, authorized_at, created_at)
SELECT $1 || lpad(n::text, 19, '0'), $2, $7 || lpad(n::text, 19, '0'), $3,
    CASE WHEN n % 10 = 0 THEN '=order-' ELSE 'order-' END || n, 'AUTHORIZED',
    100 + n % 100000, 0, (ARRAY['USD', 'CLP', 'EUR'])[1 + n % 3], $4, 'tok-' || n, '1213', $5, $5
FROM generate_series(1, $6::int) AS n
"""


async def seed(database_url: str, api_key: str, merchant: str, count: int, at: datetime) -> None:
    at_ms = int(at.timestamp() * 1000)
    conn = await asyncpg.connect(database_url)
    try:
        application = await conn.fetchval(
            "SELECT application_id FROM merchant_accounts WHERE id = $1", merchant
        )
        provider = PROVIDER_IDS[0]
        intents = lowest_id("payi", at_ms)[: _KEEP + 1]
        payments = lowest_id("pay", at_ms)[:_KEEP]
        await conn.execute(SEED_INTENTS, intents, application, merchant, provider, at, count)
        await conn.execute(
            SEED_PAYMENTS, payments, application, merchant, provider, at, count, intents
        )
        await conn.execute("ANALYZE payments")
    finally:
        await conn.close()


def rss_kib(pid: int) -> int:
    """The process's resident set (VmRSS) and its children's, in KiB."""
    total = 0
    pids = [pid]
    children = subprocess.run(  # noqa: S603, S607 - pgrep, fixed arguments
        ["pgrep", "-P", str(pid)], capture_output=True, text=True, check=False
    ).stdout.split()
    pids += [int(child) for child in children]
    for one in pids:
        try:
            with open(f"/proc/{one}/status") as status:
                total += next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
        except (FileNotFoundError, StopIteration):
            continue
    return total


def export(url: str, api_key: str, at: datetime, fmt: str, pid: int, timeout: float) -> dict[str, float]:
    start, end = at.replace(microsecond=0), at.replace(microsecond=0) + timedelta(seconds=1)
    highest = [rss_kib(pid)]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            highest.append(rss_kib(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    before = highest[0]
    lines = size = 0
    began = time.monotonic()
    sampler.start()
    params = {"from": start.isoformat(), "to": end.isoformat(), "format": fmt}
    headers = {"Authorization": f"Bearer {api_key}"}
    first_byte = None
    with httpx.stream(
        "GET", url + "/v1/exports/payments", params=params, headers=headers, timeout=timeout
    ) as response:
        response.raise_for_status()
        for chunk in response.iter_bytes():
            if first_byte is None:
                first_byte = time.monotonic() - began
            size += len(chunk)
            lines += chunk.count(b"\n")
            if time.monotonic() - began > timeout:
                raise SystemExit(f"export_stream: over {timeout} s, stopped")
    seconds = time.monotonic() - began
    done.set()
    sampler.join()
    after = rss_kib(pid)
    rows = lines - (1 if fmt == "csv" else 0)
    return {
        "rows": rows,
        "bytes": size,
        "seconds": round(seconds, 1),
        "first_byte_seconds": round(first_byte or 0.0, 3),
        "rows_per_second": round(rows / seconds),
        "rss_before_mib": round(before / 1024, 1),
        "rss_highest_mib": round(max(highest) / 1024, 1),
        "rss_after_mib": round(after / 1024, 1),
        "growth_mib": round((max(highest) - before) / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create a database")
    parser.add_argument("--payments", type=int, default=1_000_000)
    parser.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds the export may take")
    args = parser.parse_args()
    with fresh_database(args.admin_url, f"payorch_export_{int(time.time())}") as database_url:
        env = server_env(database_url, "http://127.0.0.1")
        subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
            [sys.executable, "-m", "payorch", "migrate"], env=env, cwd=ROOT, check=True, capture_output=True
        )
        api_key, merchant = sandbox_application(env)
        at = datetime.now(UTC) - timedelta(days=1)
        began = time.monotonic()
        asyncio.run(seed(database_url, api_key, merchant, args.payments, at))
        print(f"seeded {args.payments} payments in {time.monotonic() - began:.1f} s", flush=True)
        with started_server(database_url, 1) as (url, _env, process):
            result = export(url, api_key, at, args.format, process.pid, args.timeout)
        print(f"RESULT {result}", flush=True)


if __name__ == "__main__":
    main()
