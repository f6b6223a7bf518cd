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
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.kit import ADMIN_URL, ROOT, free_port, fresh_database, sandbox_application, server_env

COLLECTED = re.compile(r"Collected : (\d+)")
WARM_UP = 200
CONNECTIONS = 8


def valgrind(command: list[str]) -> list[str]:
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null"] + command


@contextmanager
def counted_server(command: list[str], env: dict[str, str], url: str, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` under callgrind until the block ends; after it, ``log`` holds valgrind's summary."""
    with log.open("wb") as stderr:
        process = subprocess.Popen(  # noqa: S603 - our own servers, fixed arguments
            valgrind(command), env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr
        )
    try:
        deadline = time.monotonic() + 300  # start-up under valgrind is slow
        while True:
            try:
                httpx.get(url + "/openapi.json", timeout=30)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"server did not start: {log.read_text()[-2000:]}") from None
                time.sleep(1)
        yield process
    finally:
        process.send_signal(signal.SIGINT)  # uvicorn shuts down; valgrind then prints the total
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


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


def instrument(pid: int, state: str) -> None:
    subprocess.run(  # noqa: S603 - fixed arguments
        ["callgrind_control", "--instr=" + state, str(pid)], capture_output=True, check=True
    )


def counted(url: str, pid: int, key: str, merchant: str, count: int) -> None:
    asyncio.run(creates(url, key, merchant, WARM_UP, "warm"))
    instrument(pid, "on")
    asyncio.run(creates(url, key, merchant, count, "counted"))
    instrument(pid, "off")


def total(log: Path) -> int:
    found = COLLECTED.search(log.read_text())
    assert found is not None, log.read_text()[-2000:]
    return int(found.group(1))


def payorch(admin_url: str, count: int, log: Path) -> float:
    with fresh_database(admin_url, f"payorch_icreate_{uuid.uuid4().hex[:8]}") as database_url:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = server_env(database_url, url)
        # The schema and the key before valgrind: only the serving process is counted.
        subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
            [sys.executable, "-m", "payorch", "migrate"], env=env, cwd=ROOT, check=True, capture_output=True
        )
        key, merchant = sandbox_application(env)
        command = [sys.executable, "-m", "payorch", "serve", "--port", str(port), "--workers", "1", "--no-worker"]
        with counted_server(command, env, url, log) as process:
            counted(url, process.pid, key, merchant, count)
    return total(log) / count


def bare(admin_url: str, count: int, log: Path) -> float:
    with fresh_database(admin_url, f"bare_icreate_{uuid.uuid4().hex[:8]}") as database_url:
        subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
            [sys.executable, "-m", "bench.bare_app", "init", database_url], cwd=ROOT, check=True
        )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "BARE_DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "uvicorn", "--factory", "bench.bare_app:create_app", "--port", str(port)]
        command += ["--workers", "1", "--no-access-log", "--log-level", "warning"]
        with counted_server(command, env, url, log) as process:
            counted(url, process.pid, "unused", "mer_bare", count)
    return total(log) / count


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
