"""CPU per whole sandbox payment, by process: payorch's API processes, PostgreSQL, the client.

    PYTHONPATH=src:. .venv/bin/python -m bench.cpu_per_payment [--payments 600] [--buyers 16] [--workers 2]

For provider A (through `auto`) and then provider B: a fresh PostgreSQL database, `payorch serve
--workers N --no-worker` (rate limit out of the way), 100 warm-up payments, then `--payments`
payments by `--buyers` buyers with the client of bench/sandbox_payment.py (in this process). The
figures are user + system CPU time over the timed run divided by the payments: the server's
processes (from /proc), the PostgreSQL backends of that database (pg_stat_activity, from /proc)
and this process (the client). Where bench/compare.py says how fast, this says who pays.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import time
import uuid

from bench.kit import ADMIN_URL, backends, busy, fresh_database, load, sandbox_application, started_server
from bench.payment_client import PROVIDERS, run


def measure(admin_url: str, provider: str, payments: int, buyers: int, workers: int) -> None:
    with (
        fresh_database(admin_url, f"payorch_cpupay_{uuid.uuid4().hex[:8]}") as url,
        started_server(url, workers) as (server_url, env, process),
    ):
        key, merchant = sandbox_application(env)
        asyncio.run(run(server_url, key, merchant, PROVIDERS[provider], 100, buyers))  # warm up
        children = subprocess.run(  # noqa: S603 - fixed arguments
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        servers = [process.pid, *(int(pid) for pid in children)]
        database = asyncio.run(backends(url))
        loadavg = load()
        before = (busy(servers), busy(database), time.process_time())
        figures = asyncio.run(run(server_url, key, merchant, PROVIDERS[provider], payments, buyers))
        # Backends opened during the run (pools grow with demand) count from their start.
        every_backend = sorted({*database, *asyncio.run(backends(url))})
        after = (busy(servers), busy(every_backend), time.process_time())
        server, postgres, client = (1000 * (b - a) / payments for a, b in zip(before, after, strict=True))
        print(
            f"provider {provider:<5} load={loadavg:<16} payments/s={figures['payments_per_second']} "
            f"cpu_ms_per_payment server={server:.1f} postgres={postgres:.1f} client={client:.1f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--payments", type=int, default=600)
    parser.add_argument("--buyers", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="API processes")
    args = parser.parse_args()
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    for provider in ("auto", "b"):
        measure(args.admin_url, provider, args.payments, args.buyers, args.workers)


if __name__ == "__main__":
    main()
