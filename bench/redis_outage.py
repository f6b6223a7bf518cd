"""Benchmark: API creates while Redis answers, while it hangs (CLIENT PAUSE) and while it is
stopped (killed), against one `payorch serve --no-worker` with PAYORCH_REDIS_URL set.

    PYTHONPATH=src python bench/redis_outage.py [--seconds 10] [--lanes 4]

A redis-server of its own on a free port (/usr/bin/redis-server), a temporary SQLite file, the
default settings. Each phase runs ``--lanes`` clients creating intents one after another for
``--seconds``; a phase's line gives the creates answered, their status codes, p50 and max.
Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.kit import SECRET_KEY  # noqa: E402


@dataclass(frozen=True)
class Tenant:
    headers: dict[str, str]
    body: dict[str, object]


def create_tenant(env: dict[str, str]) -> Tenant:
    done = subprocess.run(
        [sys.executable, "-m", "payorch", "applications", "create", "--name", "bench", "--environment", "SANDBOX",
         "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    created = json.loads(done.stdout)
    body = {"merchant_account_id": created["merchant_account_id"], "external_reference": "bench",
            "amount": 1000, "currency": "CLP", "return_url": "https://shop.example/r"}  # fmt: skip
    return Tenant({"Authorization": f"Bearer {created['api_key']}"}, body)


async def wait_for(api: httpx.AsyncClient) -> None:
    for _ in range(600):
        try:
            await api.get("/v1/payment-intents/payi_x")
            return
        except httpx.TransportError:
            await asyncio.sleep(0.1)
    raise SystemExit("payorch serve did not answer in 60 s")


async def phase(api: httpx.AsyncClient, tenant: Tenant, seconds: float, lanes: int) -> str:
    statuses: Counter[int] = Counter()
    times_ms: list[float] = []
    deadline = time.perf_counter() + seconds

    async def lane() -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            answer = await api.post("/v1/payment-intents", json=tenant.body, headers=tenant.headers)
            times_ms.append((time.perf_counter() - started) * 1000)
            statuses[answer.status_code] += 1

    await asyncio.gather(*(lane() for _ in range(lanes)))
    return (
        f"{len(times_ms)} creates ({len(times_ms) / seconds:.0f}/s) {dict(sorted(statuses.items()))}, "
        f"p50 {statistics.median(times_ms):.1f} ms, max {max(times_ms):.1f} ms"
    )


def start_redis(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            redis.Redis(port=port).ping()
            return server
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit("redis-server did not start")


async def run(args: argparse.Namespace, directory: str) -> None:
    redis_port, port = random.sample(range(20000, 40000), 2)  # noqa: S311
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYORCH_")}
    env.update(
        PYTHONPATH=str(ROOT / "src"),
        PAYORCH_DATABASE_URL=f"sqlite:///{directory}/bench.db",
        PAYORCH_SECRET_KEY=SECRET_KEY,
        PAYORCH_REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        PAYORCH_RATE_LIMIT="100000/second",  # throughput, not the limit, is measured
    )
    subprocess.run([sys.executable, "-m", "payorch", "migrate"], env=env, capture_output=True, check=True)
    tenant = create_tenant(env)
    store = start_redis(redis_port)
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "payorch", "serve", "--no-worker", "--port", str(port)],
        env={**env, "PAYORCH_PUBLIC_URL": base}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        async with httpx.AsyncClient(base_url=base, trust_env=False, timeout=120) as api:
            await wait_for(api)
            await phase(api, tenant, 2, args.lanes)  # warm-up, not counted
            print("Redis answering:", await phase(api, tenant, args.seconds, args.lanes))
            redis.Redis(port=redis_port).execute_command(
                "CLIENT", "PAUSE", int(args.seconds * 1000) + 60_000, "ALL"
            )
            print("Redis paused:   ", await phase(api, tenant, args.seconds, args.lanes))
            store.kill()
            store.wait()
            print("Redis stopped:  ", await phase(api, tenant, args.seconds, args.lanes))
    finally:
        server.terminate()
        server.wait(timeout=60)
        store.kill()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--lanes", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        await run(args, directory)


if __name__ == "__main__":
    asyncio.run(main())
