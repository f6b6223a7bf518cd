"""The cost of PAYORCH_DATABASE_TRANSACTION_POOLING: whole sandbox payments behind pgbouncer,
the setting off and on in turns, in the same run.

    PYTHONPATH=src:. .venv/bin/python -m bench.pgbouncer_pooling [--payments 120] [--concurrency 8] [--rounds 2]

Debian's pgbouncer (tests/pgbouncer.py) in session mode, where payorch works either way, in front
of one migrated database; then the same pgbouncer in transaction mode with the setting on (the
mode the setting is for; off, it fails: tests/test_pgbouncer.py). Each variant is one `payorch
serve --no-worker` (one process), a new sandbox application, ``--payments`` whole payments with
provider A (create, checkout, the buyer's POST page, approve, return: bench/payment_client.py) by
``--concurrency`` clients; reported: payments per second, p50/p99 of a payment, and the server's
CPU per payment. With the setting every step is a transaction (BEGIN and COMMIT more for each
read and for the create) and every statement is parsed again (no named prepared statements).
"""

from __future__ import annotations

import argparse
import asyncio
import os

from tests.pgbouncer import pgbouncer, through, version

from bench.kit import (
    ADMIN_URL,
    cpu_seconds,
    fresh_database,
    load,
    report,
    sandbox_application,
    started_server,
)
from bench.payment_client import run

PROVIDER = "provider_a_redirect_post"
SERVER_CONNECTIONS = 40  # session mode: one per client connection (tests/test_pgbouncer.py)


def measure(url: str, setting: str, payments: int, concurrency: int) -> dict[str, float | str]:
    os.environ["PAYORCH_DATABASE_TRANSACTION_POOLING"] = setting  # server_env copies os.environ
    with started_server(url, workers=1, startup_seconds=180) as (base, env, process):  # a loaded machine
        key, merchant = sandbox_application(env)
        before = cpu_seconds(process.pid)
        figures: dict[str, float | str] = dict(
            asyncio.run(run(base, key, merchant, PROVIDER, payments, concurrency))
        )
        used = cpu_seconds(process.pid) - before
    figures["server_cpu_ms_per_payment"] = round(1000 * used / (payments + 1), 2)  # + the warm-up
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--payments", type=int, default=120)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"{version()}; load {load()}; nproc {os.cpu_count()}", flush=True)
    with fresh_database(ADMIN_URL, migrate=True) as url:
        for round_ in range(1, args.rounds + 1):
            with pgbouncer("session", SERVER_CONNECTIONS) as port:
                for setting in ("false", "true"):
                    figures = measure(through(url, port), setting, args.payments, args.concurrency)
                    report(f"round {round_} session setting={setting}", figures)
            with pgbouncer("transaction", 4) as port:
                figures = measure(through(url, port), "true", args.payments, args.concurrency)
                report(f"round {round_} transaction setting=true", figures)


if __name__ == "__main__":
    main()
