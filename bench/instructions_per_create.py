"""Instructions per create of one server process, payorch beside the bare app, counted by valgrind.

    PYTHONPATH=src:. .venv/bin/python -m bench.instructions_per_create [--creates 400]

Each server (payorch: `payorch serve --workers 1 --no-worker`, rate limit out of the way; the
bare app of bench/bare_app.py under uvicorn) runs as one process under `valgrind
--tool=callgrind` on its own fresh PostgreSQL database. A client outside valgrind sends the body
of bench/create_intents.lua over 8 keep-alive connections, each with its own Idempotency-Key:
200 creates to warm up, then `--creates` counted (instrumentation switched on and off around them
with `callgrind_control`). The figure is the server process's instructions per create: HTTP
parsing, the app and the driver, not PostgreSQL's nor the client's. bench/compare.py's create
ratio is creates/s, which moves by 10 % and more between runs on a shared machine; this count
moves by well under 1 %, so it shows which side of a change costs what (docs/performance.md).
Needs valgrind (on the machine).
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

from bench.kit import (
    ADMIN_URL,
    ROOT,
    counted_payorch,
    counted_server,
    free_port,
    fresh_database,
    instrument,
    total_instructions,
)

WARM_UP = 200
CONNECTIONS = 8


async def creates(url: str, key: str, merchant: str, count: int, prefix: str) -> None:
    body = (
        f'{{"merchant_account_id":"{merchant}","external_reference":"bench","amount":1500,'
        '"currency":"CLP","return_url":"https://shop.example/return","metadata":{"k":"v"}}'
    )
    numbers = iter(range(count))
    limits = httpx.Limits(max_connections=CONNECTIONS)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:

        async def connection() -> None:
            for n in numbers:
                headers = {
                    "Authorization": f"Bearer {key}",
                    "Content-Type": "application/json",
                    "Idempotency-Key": f"{prefix}-{n}",
                }
                answer = await client.post("/v1/payment-intents", content=body, headers=headers)
                assert answer.status_code == 201, answer.text

        await asyncio.gather(*(connection() for _ in range(CONNECTIONS)))


def counted(url: str, pid: int, key: str, merchant: str, count: int) -> None:
    asyncio.run(creates(url, key, merchant, WARM_UP, "warm"))
    instrument(pid, "on")
    asyncio.run(creates(url, key, merchant, count, "counted"))
    instrument(pid, "off")


def payorch(admin_url: str, count: int, log: Path) -> float:
    name = f"payorch_icreate_{uuid.uuid4().hex[:8]}"
    with counted_payorch(admin_url, name, log) as (url, key, merchant, pid):
        counted(url, pid, key, merchant, count)
    return total_instructions(log) / count


def bare(admin_url: str, count: int, log: Path) -> float:
    with fresh_database(admin_url, f"bare_icreate_{uuid.uuid4().hex[:8]}") as database_url:
        subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
            [sys.executable, "-m", "bench.bare_app", "init", database_url], cwd=ROOT, check=True
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "BARE_DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "bench.bare_app:create_app",
            "--port",
            str(port),
        ]
        command += ["--workers", "1", "--no-access-log", "--log-level", "warning"]
        with counted_server(command, env, url, log) as process:
            counted(url, process.pid, "unused", "mer_bare", count)
    return total_instructions(log) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default=ADMIN_URL, help="PostgreSQL, to create databases")
    parser.add_argument("--creates", type=int, default=400)
    args = parser.parse_args()
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    tag = uuid.uuid4().hex[:8]
    ours = payorch(args.admin_url, args.creates, logs / f"payorch-icreate-{tag}.log")
    print(f"payorch instructions_per_create={ours / 1e3:.0f}k", flush=True)
    floor = bare(args.admin_url, args.creates, logs / f"bare-icreate-{tag}.log")
    print(f"bare    instructions_per_create={floor / 1e3:.0f}k", flush=True)
    print(f"  instructions per create, bare / payorch: {floor / ours:.2f}", flush=True)


if __name__ == "__main__":
    main()
