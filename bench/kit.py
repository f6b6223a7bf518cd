"""What the benchmarks share (bench/README.md): PostgreSQL databases made and dropped, servers
started (payorch, the bare app), wrk runs, percentiles, the load average and CPU time.

One way for each: a benchmark imports these, not another benchmark. Scripts run by path
(``python bench/x.py``) put the checkout on ``sys.path`` before importing ``bench.kit``.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import asyncpg
import httpx

if TYPE_CHECKING:
    from payorch.applications.service import CreatedApplication
    from payorch.runtime import Runtime

ROOT = Path(__file__).resolve().parents[1]
# The server databases are created on (and dropped from); PAYORCH_BENCH_POSTGRES_URL overrides it.
ADMIN_URL = os.environ.get("PAYORCH_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
# PAYORCH_SECRET_KEY of the benchmarks' throwaway databases and servers.
SECRET_KEY = "bench-secret-key-0123456789abcdef0123456789"  # noqa: S105
RESULT = re.compile(r"RESULT (.*)")


# -- figures -----------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank percentile: the smallest value with at least p% of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def summary(samples: list[float], points: tuple[int, ...] = (50, 99), digits: int = 2) -> dict[str, float]:
    """``{"p50_ms": ..., "p99_ms": ..., "n": ...}`` of samples in milliseconds."""
    shown: dict[str, float] = {f"p{p}_ms": round(percentile(samples, p), digits) for p in points}
    return shown | {"n": len(samples)}


def load() -> str:
    """The load average (1, 5, 15 minutes), to print beside each figure."""
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def report(label: str, figures: dict[str, float | str]) -> None:
    shown = " ".join(f"{key}={value}" for key, value in figures.items())
    print(f"{label:<34} load={load():<16} {shown}", flush=True)


def cpu_seconds(pid: int, *, tree: bool = True) -> float:
    """CPU time (user + system) used so far by ``pid`` and, with ``tree``, its descendants
    (uvicorn's workers), from /proc; a process that has ended counts for nothing."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for each in [pid, *(_descendants(pid) if tree else [])]:
        try:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # fields 14, 15: utime, stime
    return total


def busy(pids: list[int]) -> float:
    """CPU seconds of ``pids``, each alone (PostgreSQL backends, say)."""
    return sum(cpu_seconds(pid, tree=False) for pid in pids)


def _descendants(pid: int) -> list[int]:
    found = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            listed = children.read_text().split()
        except FileNotFoundError:
            continue
        for child in map(int, listed):
            found += [child, *_descendants(child)]
    return found


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU ticks of the whole machine so far (/proc/stat): busy share = delta ratio."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return float(sum(values) - idle), float(sum(values))


# -- databases ---------------------------------------------------------------------------------


async def _admin(admin_url: str, sql: str) -> None:
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def create_database(admin_url: str, name: str | None = None, *, migrate: bool = False) -> str:
    """A new database on ``admin_url``'s server (a fresh name unless given): its URL.
    ``migrate``: with payorch's tables (Alembic, as `payorch migrate`)."""
    name = name or f"payorch_bench_{secrets.token_hex(4)}"
    await _admin(admin_url, f'CREATE DATABASE "{name}"')
    url = f"{admin_url.rsplit('/', 1)[0]}/{name}"
    if migrate:
        from payorch.db.migrate import upgrade_in_thread

        await asyncio.to_thread(upgrade_in_thread, url)
    return url


async def drop_database(admin_url: str, name: str) -> None:
    """Drops the database ``name`` (or the one a URL ends with)."""
    await _admin(admin_url, f'DROP DATABASE IF EXISTS "{name.rsplit("/", 1)[-1]}" WITH (FORCE)')


@contextmanager
def fresh_database(admin_url: str, name: str | None = None, *, migrate: bool = False) -> Iterator[str]:
    """A new database for the block (its URL), dropped after it."""
    url = asyncio.run(create_database(admin_url, name, migrate=migrate))
    try:
        yield url
    finally:
        asyncio.run(drop_database(admin_url, url))


async def backends(database_url: str) -> list[int]:
    """The PostgreSQL backends connected to ``database_url``'s database (this probe's excepted)."""
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await conn.close()
    return [row["pid"] for row in rows]


def stop(*processes: subprocess.Popen[bytes] | subprocess.Popen[str] | None) -> None:
    for process in processes:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)


# -- servers -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def started_process(
    command: list[str], env: dict[str, str], ready_url: str, startup_seconds: float = 60
) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running until the block ends; waits until ``ready_url`` answers."""
    process = subprocess.Popen(  # noqa: S603 - our own servers, fixed arguments
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + startup_seconds
        while True:
            try:
                httpx.get(ready_url, timeout=1)
                break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{command[:4]} did not start")
            time.sleep(0.2)
        yield process
    finally:
        stop(process)


def in_process_env(database_url: str) -> dict[str, str]:
    """The environment of an app served in process (ASGI) on ``database_url`` for a benchmark."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_PUBLIC_URL": "http://testserver",
        "PAYORCH_SECRET_KEY": SECRET_KEY,
        "PAYORCH_RATE_LIMIT": "1000000/second",
    }


def server_env(database_url: str, url: str) -> dict[str, str]:
    """The environment of ``payorch serve`` for a benchmark at ``url`` (rate limit out of the way)."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_PUBLIC_URL": url,
        "PAYORCH_SECRET_KEY": os.environ.get("PAYORCH_SECRET_KEY", SECRET_KEY),
        "PAYORCH_RATE_LIMIT": "1000000/second",
    }


@contextmanager
def started_server(
    database_url: str, workers: int, startup_seconds: float = 60
) -> Iterator[tuple[str, dict[str, str], subprocess.Popen[bytes]]]:
    """``payorch serve`` (no worker, rate limit out of the way): its URL, env and process."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = server_env(database_url, url)
    command = [sys.executable, "-m", "payorch", "serve", "--port", str(port)]
    command += ["--workers", str(workers), "--no-worker"]
    with started_process(command, env, url + "/openapi.json", startup_seconds) as process:
        yield url, env, process


@contextmanager
def bare_server(database_url: str, workers: int) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The bare app (bench/bare_app.py) under uvicorn: its URL and process."""
    subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "-m", "bench.bare_app", "init", database_url], cwd=ROOT, check=True
    )
    port = free_port()
    env = {**os.environ, "BARE_DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "uvicorn", "--factory", "bench.bare_app:create_app"]
    command += ["--port", str(port), "--workers", str(workers), "--no-access-log"]
    command += ["--log-level", "warning"]
    url = f"http://127.0.0.1:{port}"
    with started_process(command, env, url + "/openapi.json") as process:
        yield url, process


async def mock_application(runtime: Runtime, merchant_name: str) -> CreatedApplication:
    """A new SANDBOX application with MOCK connectors, written through ``runtime`` (in process)."""
    from payorch.applications.service import create_application
    from payorch.connectors.service import add_mock_connectors

    async with runtime.database.transaction() as conn:
        created = await create_application(
            conn, runtime.clock, name="bench", environment="SANDBOX", merchant_name=merchant_name
        )
        await add_mock_connectors(
            conn,
            runtime.clock,
            application_id=created.application_id,
            merchant_account_id=created.merchant_account_id,
        )
    return created


def sandbox_application(env: dict[str, str]) -> tuple[str, str]:
    """(API key, merchant id) of a new SANDBOX application with MOCK connectors."""
    command = [sys.executable, "-m", "payorch", "applications", "create", "--name", "bench"]
    command += ["--environment", "SANDBOX", "--mock-connectors", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)  # noqa: S603
    created = json.loads(done.stdout)
    return created["api_key"], created["merchant_account_id"]


# -- counted by valgrind -------------------------------------------------------------------------

COLLECTED = re.compile(r"Collected : (\d+)")


def valgrind(command: list[str]) -> list[str]:
    return ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=/dev/null"] + command


@contextmanager
def counted_server(
    command: list[str], env: dict[str, str], url: str, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
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


@contextmanager
def counted_payorch(admin_url: str, name: str, log: Path) -> Iterator[tuple[str, str, str, int]]:
    """One ``payorch serve --workers 1 --no-worker`` under callgrind (``counted_server``) on a fresh
    database named ``name``, migrated and given a sandbox application before valgrind (only the
    serving process is counted): its URL, API key, merchant id and process id."""
    with fresh_database(admin_url, name) as database_url:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        env = server_env(database_url, url)
        subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
            [sys.executable, "-m", "payorch", "migrate"], env=env, cwd=ROOT, check=True, capture_output=True
        )
        key, merchant = sandbox_application(env)
        command = [sys.executable, "-m", "payorch", "serve", "--port", str(port)]
        command += ["--workers", "1", "--no-worker"]
        with counted_server(command, env, url, log) as process:
            yield url, key, merchant, process.pid


def instrument(pid: int, state: str) -> None:
    subprocess.run(  # noqa: S603 - fixed arguments
        ["callgrind_control", "--instr=" + state, str(pid)], capture_output=True, check=True
    )


def total_instructions(log: Path) -> int:
    found = COLLECTED.search(log.read_text())
    assert found is not None, log.read_text()[-2000:]
    return int(found.group(1))


# -- wrk ---------------------------------------------------------------------------------------


def wrk_result(
    script: str, url: str, env: dict[str, str], seconds: int, threads: int, connections: int
) -> dict[str, float]:
    """wrk with ``bench/<script>``: the figures of the RESULT line its done() prints."""
    out = subprocess.run(  # noqa: S603 - fixed arguments
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{int(seconds)}s", "--latency"]
        + ["-s", str(ROOT / "bench" / script), url],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = RESULT.search(out)
    if found is None:
        raise SystemExit(f"wrk printed no RESULT line:\n{out}")
    for line in out.splitlines():  # where failures stopped, when the script says (payment_flow.lua)
        if line.startswith("FAILED "):
            print(f"  {script}: {line}", flush=True)
    pairs = (item.split("=") for item in found.group(1).split())
    return {name: float(value) for name, value in pairs}


def wrk(url: str, key: str, merchant: str, seconds: int, connections: int) -> dict[str, float]:
    """Creates (bench/create_intents.lua, a fresh Idempotency-Key each): rps, p50_ms, p99_ms..."""
    env = {"PAYORCH_BENCH_KEY": key, "PAYORCH_BENCH_MERCHANT": merchant}
    return wrk_result("create_intents.lua", url, env, seconds, 2, connections)
