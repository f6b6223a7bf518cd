"""Instructions per whole sandbox payment, counted by valgrind: the same figure on a busy machine.

    PYTHONPATH=src:. .venv/bin/python -m bench.instructions_per_payment [--payments 30]

For provider A (through `auto`) and provider B: a fresh PostgreSQL database and one process under
`valgrind --tool=callgrind` serving the app in process (ASGI, uvloop) to the client of
bench/sandbox_payment.py, one payment after another: 50 to warm up, then `--payments` counted
(instrumentation switched on and off around them with `callgrind_control`). The figure is the
instructions of that process per payment: the app, its in-process calls to the simulator and the
client (the same work on both sides of a comparison), not PostgreSQL's. Where timing figures
move by 10 % and more between runs on a shared machine, the count moves by well under 1 %, so a
change of a few per cent shows (docs/performance.md). Needs valgrind (on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import uuid

import httpx
import uvloop

from bench.kit import ADMIN_URL, ROOT, fresh_database, in_process_env, sandbox_application
from bench.payment_client import PROVIDERS, one_payment

COLLECTED = re.compile(r"Collected : (\d+)")
WARM_UP = 50


async def payments_in_process(database_url: str, provider: str, count: int) -> None:
    """The child: serve the app in process and make the payments, counted between the toggles."""
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
        for n in range(WARM_UP):
            await one_payment(client, merchant, PROVIDERS[provider], -1 - n)
        await asyncio.sleep(0.5)  # provider B's notifications of the warm-up are sent
        instrument("on")
        for n in range(count):
            await one_payment(client, merchant, PROVIDERS[provider], n)
        await asyncio.sleep(0.5)  # and those of the counted payments
        instrument("off")
    await runtime.close()


def instrument(state: str) -> None:
    subprocess.run(  # noqa: S603 - fixed arguments
        ["callgrind_control", "--instr=" + state, str(os.getpid())], capture_output=True, check=True
    )


def count(admin_url: str, provider: str, payments: int) -> float:
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
        _, _, provider, url, payments = sys.argv
        uvloop.run(payments_in_process(url, provider, int(payments)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--payments", type=int, default=30)
    args = parser.parse_args()
    for provider in ("auto", "b"):
        per_payment = count(args.admin_url, provider, args.payments)
        print(f"provider {provider:<5} instructions_per_payment={per_payment / 1e6:.2f}M", flush=True)


if __name__ == "__main__":
    main()
