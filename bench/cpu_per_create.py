"""CPU time per create of one API process, payorch beside the bare app (bench/bare_app.py).

    PYTHONPATH=src:. .venv/bin/python -m bench.cpu_per_create [--seconds 8] [--rounds 3]

Each server runs as one process on its own fresh PostgreSQL database (payorch: `payorch serve
--workers 1 --no-worker`, rate limit out of the way), driven by the same wrk script as
bench/compare.py (64 connections), one after the other, alternating, `--rounds` times. The
figure is the server process's user + system CPU time (from /proc/<pid>/stat) over the run,
divided by the creates it answered: unlike creates/s it does not depend on how the two cores
are shared between the server, PostgreSQL and wrk, so two commits compare in few runs. Beside it,
the same for the PostgreSQL backends of the server's database (pg_stat_activity, from /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid

from bench.kit import (
    ADMIN_URL,
    backends,
    bare_server,
    busy,
    cpu_seconds,
    fresh_database,
    load,
    sandbox_application,
    started_server,
    wrk,
)


def measure(name: str, url: str, pid: int, database_url: str, key: str, merchant: str, seconds: int) -> float:
    loadavg = load()
    database = asyncio.run(backends(database_url))
    before, database_before = cpu_seconds(pid, tree=False), busy(database)
    figures = wrk(url, key, merchant, seconds, 64)
    # Backends opened during the run (pools grow with demand) count from their start.
    every_backend = sorted({*database, *asyncio.run(backends(database_url))})
    used = cpu_seconds(pid, tree=False) - before
    database_used = busy(every_backend) - database_before
    per_create = 1e6 * used / figures["requests"]
    errors = figures["socket_errors"] + figures["non_2xx"]
    print(
        f"{name:<8} load={loadavg:<16} cpu_us_per_create={per_create:.0f} "
        f"postgres_us_per_create={1e6 * database_used / figures['requests']:.0f} "
        f"creates/s={figures['rps']} p99_ms={figures['p99_ms']} errors={errors:.0f}",
        flush=True,
    )
    return per_create


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--seconds", type=int, default=8, help="per run")
    parser.add_argument("--rounds", type=int, default=3, help="pairs of runs")
    args = parser.parse_args()
    tag = uuid.uuid4().hex[:8]
    print(f"cpus={os.cpu_count()} load={load()}", flush=True)
    with (
        fresh_database(args.admin_url, f"payorch_cpu_{tag}") as payorch_db,
        fresh_database(args.admin_url, f"bare_cpu_{tag}") as bare_db,
        started_server(payorch_db, 1) as (url, env, process),
        bare_server(bare_db, 1) as (bare_url, bare_process),
    ):
        key, merchant = sandbox_application(env)
        wrk(url, key, merchant, 3, 64)  # warm up pools and caches
        wrk(bare_url, key, merchant, 3, 64)
        for _ in range(args.rounds):
            ours = measure("payorch", url, process.pid, payorch_db, key, merchant, args.seconds)
            floor = measure("bare", bare_url, bare_process.pid, bare_db, key, merchant, args.seconds)
            print(f"  CPU per create, bare / payorch: {floor / ours:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
