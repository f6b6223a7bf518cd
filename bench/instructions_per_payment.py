"""Instructions per whole sandbox payment, counted by valgrind: the same figure on a busy machine.

    PYTHONPATH=src:. .venv/bin/python -m bench.instructions_per_payment [--payments 30] [--in-process]

For provider A (through `auto`) and provider B: a fresh PostgreSQL database and one payorch
process (`payorch serve --workers 1 --no-worker`, rate limit out of the way) under `valgrind
--tool=callgrind`. The client of bench/sandbox_payment.py (bench/payment_client.py), outside
valgrind, makes payments one after another over HTTP: 50 to warm up, then `--payments` counted
(instrumentation switched on and off around them with `callgrind_control`). The figure is the
server process's instructions per payment: HTTP parsing, the app, its in-process calls to the
simulator and the driver, not PostgreSQL's nor the client's.

``--in-process``: the figure as counted until 2026-12-05: one process serving the app in process
(ASGI) to that client, both counted; the client's httpx is about a quarter of it, the same work
on both sides of a comparison (docs/performance.md, "Instructions per payment").

Where timing figures move by 10 % and more between runs on a shared machine, the count moves by
well under 1 %, so a change of a few per cent shows. Needs valgrind (on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import uvloop

from bench.kit import (
    ADMIN_URL,
    COLLECTED,
    ROOT,
    counted_payorch,
    fresh_database,
    in_process_env,
    instrument,
    sandbox_application,
    total_instructions,
)
from bench.payment_client import PROVIDERS, one_payment

WARM_UP = 50
NOTICES_SECONDS = 0.5  # for provider B's notifications of the payments before to be sent


async def payments(client: httpx.AsyncClient, merchant: str, provider: str, first: int, count: int) -> None:
    for n in range(first, first + count):
        await one_payment(client, merchant, PROVIDERS[provider], n)
    await asyncio.sleep(NOTICES_SECONDS)


def served(admin_url: str, provider: str, count: int, log: Path) -> float:
    """The server process's instructions per payment (module docstring)."""
    name = f"payorch_ipay_{uuid.uuid4().hex[:8]}"
    with counted_payorch(admin_url, name, log) as (url, key, merchant, pid):

        async def drive() -> None:
            headers = {"Authorization": f"Bearer {key}"}
            async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as client:
                await payments(client, merchant, provider, -WARM_UP, WARM_UP)
                instrument(pid, "on")
                await payments(client, merchant, provider, 0, count)
                instrument(pid, "off")

        asyncio.run(drive())
    return total_instructions(log) / count


async def in_process_child(database_url: str, provider: str, count: int) -> None:
    """``--in-process``'s counted process: the app in process and the client, between the toggles."""
    from payorch.app import create_app
    from payorch.composition import build_runtime
    from payorch.config import load_settings
    from payorch.db.migrate import upgrade_in_thread

    env = in_process_env(database_url)
    os.environ.update(env)
    upgrade_in_thread(database_url)
    key, merchant = sandbox_application(env)
    runtime = build_runtime(load_settings())
    transport = httpx.ASGITransport(app=create_app(runtime))
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url="http://testserver", headers=headers
    ) as client:
        await payments(client, merchant, provider, -WARM_UP, WARM_UP)
        instrument(os.getpid(), "on")
        await payments(client, merchant, provider, 0, count)
        instrument(os.getpid(), "off")
    await runtime.close()


def in_process(admin_url: str, provider: str, payments: int) -> float:
    with fresh_database(admin_url, f"payorch_instr_{uuid.uuid4().hex[:8]}") as url:
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-m",
            "bench.instructions_per_payment",
            "--child",
            provider,
            url,
            str(payments),
        ]
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}"}
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)  # noqa: S603
    found = COLLECTED.search(done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1)) / payments


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, provider, url, count = sys.argv
        uvloop.run(in_process_child(url, provider, int(count)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--payments", type=int, default=30)
    parser.add_argument("--in-process", action="store_true", help="app and client in one counted process")
    args = parser.parse_args()
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    for provider in ("auto", "b"):
        if args.in_process:
            per_payment = in_process(args.admin_url, provider, args.payments)
        else:
            log = logs / f"payorch-ipay-{provider}-{uuid.uuid4().hex[:8]}.log"
            per_payment = served(args.admin_url, provider, args.payments, log)
        print(f"provider {provider:<5} instructions_per_payment={per_payment / 1e6:.2f}M", flush=True)


if __name__ == "__main__":
    main()
