"""payorch against the bare stack, side by side in one run (docs/performance.md).

    PYTHONPATH=src:. .venv/bin/python -m bench.compare            # needs wrk, PostgreSQL

Both servers run on fresh PostgreSQL databases with two processes each (payorch: `payorch serve
--workers 2 --no-worker`, rate limit out of the way; the bare app: bench/bare_app.py under
uvicorn). The same clients drive both, one server at a time, alternating:

- creates: wrk, 64 connections, bench/create_intents.lua (a fresh Idempotency-Key per request);
- whole sandbox payments: 16 buyers, wrk with bench/payment_flow.lua (one connection per thread,
  each a buyer; --payment-client python: bench/sandbox_payment.py's httpx client, which held the
  bare app's floor down: docs/performance.md, "payorch against the bare stack"), provider A
  through `auto`, provider B and provider C (--provider to choose); on the bare app a "payment"
  is six creates in a row (the six client requests); each run also prints the CPU seconds of wrk
  and of the server's processes;
- memory: one payorch process alone, RSS after 50,000 and 100,000 creates;
- SQLite: the payment run against one payorch process on a SQLite file.

Each figure is printed with the load average before it; the ratio is payorch / bare.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import uuid
from pathlib import Path

import httpx

from bench.kit import (
    ADMIN_URL,
    bare_server,
    fresh_database,
    load,
    report,
    sandbox_application,
    started_server,
    wrk,
)
from bench.payment_client import PROVIDERS, drive, run, wrk_payments

BARE_BODY = {
    "merchant_account_id": "mrc_bare",
    "external_reference": "bench",
    "amount": 1990,
    "currency": "CLP",
    "return_url": "https://shop.example/return",
}


def creates(name: str, url: str, key: str, merchant: str, seconds: int) -> float:
    wrk(url, key, merchant, 3, 64)  # warm up pools and caches
    loadavg = load()
    figures = wrk(url, key, merchant, seconds, 64)
    errors = figures["socket_errors"] + figures["non_2xx"]
    shown = {"creates/s": figures["rps"], "p50_ms": figures["p50_ms"]}
    shown |= {"p99_ms": figures["p99_ms"], "errors": errors}
    print(
        f"{'creates, 64 conn, ' + name:<34} load={loadavg:<16} "
        + " ".join(f"{k}={v}" for k, v in shown.items()),
        flush=True,
    )
    return figures["rps"]


async def bare_payments(url: str, count: int, buyers: int) -> dict[str, float]:
    async def six_creates(client: httpx.AsyncClient, n: int) -> float:
        started = asyncio.get_running_loop().time()
        for step in range(6):
            answer = await client.post("/v1/payment-intents", json=BARE_BODY)
            assert answer.status_code == 201, (n, step, answer.status_code)
        return asyncio.get_running_loop().time() - started

    return await drive(url, {}, six_creates, count, buyers)


def payments(label: str, figures: dict[str, float]) -> float:
    shown: dict[str, float | str] = {"payments/s": figures["payments_per_second"]}
    shown |= {"p50_ms": figures["p50_ms"], "p99_ms": figures["p99_ms"]}
    for extra in ("errors", "client_cpu_s", "server_cpu_s", "machine_busy"):
        if extra in figures:
            shown[extra] = figures[extra]
    report(label, shown)
    return figures["payments_per_second"]


def payment_pair(
    args: argparse.Namespace,
    provider: str,
    ours: tuple[str, int],
    bare: tuple[str, int],
    who: tuple[str, str],
) -> None:
    """One payment run on payorch then one on the bare app, and their ratio."""
    (url, pid), (bare_url, bare_pid), (key, merchant) = ours, bare, who
    label = f"payments {provider}, {args.buyers} buyers"
    rates = []
    for target, target_pid, bare_mode in ((url, pid, False), (bare_url, bare_pid, True)):
        if args.payment_client == "python" and bare_mode:
            figures = asyncio.run(bare_payments(target, args.payments, args.buyers))
        elif args.payment_client == "python":
            figures = asyncio.run(run(target, key, merchant, PROVIDERS[provider], args.payments, args.buyers))
        else:
            wrk_payments(target, key, merchant, PROVIDERS[provider], 2, args.buyers, bare=bare_mode)  # warm
            figures = wrk_payments(
                target,
                key,
                merchant,
                PROVIDERS[provider],
                args.seconds,
                args.buyers,
                bare=bare_mode,
                server_pid=target_pid,
            )
        rates.append(payments(f"{label}, {'bare' if bare_mode else 'payorch'}", figures))
    ratio = rates[0] / rates[1]
    print(f"  ratio payments ({provider}): {ratio:.2f}", flush=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise SystemExit(f"no VmRSS for {pid}")


def memory(database_url: str, total: int) -> None:
    """RSS of one API process (alone) after total/2 and total creates."""
    with started_server(database_url, 1) as (url, env, process):
        key, merchant = sandbox_application(env)
        done = 0
        marks: dict[str, float | str] = {"start_mb": rss_mb(process.pid)}
        half = False
        while done < total:
            done += int(wrk(url, key, merchant, 5, 64)["requests"])
            if not half and done >= total // 2:
                marks[f"after_{done}_mb"] = rss_mb(process.pid)
                half = True
        marks[f"after_{done}_mb"] = rss_mb(process.pid)
        report("memory, one payorch process", marks)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--seconds", type=int, default=20, help="per create run and per wrk payment run")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of each measure")
    parser.add_argument(
        "--payments", type=int, default=600, help="per payment run of --payment-client python"
    )
    parser.add_argument(
        "--payment-client",
        choices=("wrk", "python"),
        default="wrk",
        help="wrk: bench/payment_flow.lua (default); python: bench/sandbox_payment.py's httpx client",
    )
    parser.add_argument(
        "--provider", action="append", choices=sorted(PROVIDERS), help="repeatable; default: auto, b, c"
    )
    parser.add_argument("--buyers", type=int, default=16)
    parser.add_argument("--memory-creates", type=int, default=100_000, help="0: skip")
    parser.add_argument("--sqlite-payments", type=int, default=300, help="0: skip")
    args = parser.parse_args()
    tag = uuid.uuid4().hex[:8]
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    with (
        fresh_database(args.admin_url, f"payorch_cmp_{tag}") as payorch_db,
        fresh_database(args.admin_url, f"bare_cmp_{tag}") as bare_db,
        started_server(payorch_db, 2) as (url, env, process),
        bare_server(bare_db, 2) as (bare_url, bare_process),
    ):
        key, merchant = sandbox_application(env)
        for _ in range(args.rounds):
            ours = creates("payorch", url, key, merchant, args.seconds)
            floor = creates("bare", bare_url, key, merchant, args.seconds)
            print(f"  ratio creates: {ours / floor:.2f}", flush=True)
        for provider in args.provider or ["auto", "b", "c"]:
            for _ in range(args.rounds):
                payment_pair(
                    args, provider, (url, process.pid), (bare_url, bare_process.pid), (key, merchant)
                )
    if args.memory_creates:
        with fresh_database(args.admin_url, f"payorch_mem_{tag}") as memory_db:
            memory(memory_db, args.memory_creates)
    if args.sqlite_payments:
        with (
            tempfile.TemporaryDirectory() as tmp,
            started_server(f"sqlite:///{tmp}/bench.db", 1) as (url, env, _),
        ):
            key, merchant = sandbox_application(env)
            figures = asyncio.run(run(url, key, merchant, "auto", args.sqlite_payments, args.buyers))
            payments(f"payments auto, {args.buyers} buyers, SQLite 1 process", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
