"""Benchmark: does one SANDBOX tenant flooding its webhook fan-out slow another tenant down?
The quiet tenant's create p50 and notice delay, alone ("no flood") and then while the flooding
tenant runs, side by side in one run, against one `payorch serve` (its API and its worker).

    PYTHONPATH=src python bench/tenant_flood.py [--sqlite] [--quiet-intents 300] \
        [--flood-endpoints 4000] [--flood-rate 3] [--flood-concurrency 1]

The flooding tenant asks for ``--flood-endpoints`` webhook endpoints (the attack of issue 26
made 4,000; PAYORCH_MAX_WEBHOOK_ENDPOINTS lets 16 through, the rest are refused 409), all
pointed at a receiver that accepts connections and never answers (every attempt times out after
PAYORCH_WEBHOOK_TIMEOUT_SECONDS), then creates intents in a loop (``--flood-concurrency`` at a
time, no pause) until the quiet tenant's measurement ends. The quiet tenant has one endpoint (a
receiver answering 200 at once) and creates ``--quiet-intents`` intents one at a time, 20 ms
apart. Create = the POST /v1/payment-intents round trip; notice delay = arrival at its receiver
- the moment the POST answered (its transaction had committed). Loopback only.

PostgreSQL by default (PAYORCH_BENCH_POSTGRES_URL, default
postgresql://postgres@127.0.0.1:5432/test: a fresh database is created and dropped);
``--sqlite``: a temporary SQLite file. The settings are the defaults but the URL rule for
loopback receivers (PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE=true).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.kit import ADMIN_URL, SECRET_KEY, create_database, drop_database, free_port, percentile  # noqa: E402

QUIET_GAP_SECONDS = 0.02


@dataclass(frozen=True)
class Tenant:
    headers: dict[str, str]
    body: dict[str, object]


@dataclass(frozen=True)
class Figures:
    create_ms: list[float]
    delay_ms: list[float]


def hanging_receiver() -> tuple[socket.socket, str]:
    """A listening socket nobody accepts from: a notice's connection opens and no answer ever
    comes, so every attempt runs into the worker's timeout."""
    for _ in range(50):
        host = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"  # noqa: S311
        sock = socket.socket()
        try:
            sock.bind((host, 3000))
        except OSError:
            sock.close()
            continue
        sock.listen(4096)
        return sock, f"http://{host}:3000"
    raise SystemExit("no free loopback address")


def create_tenant(env: dict[str, str], name: str) -> Tenant:
    done = subprocess.run(
        [sys.executable, "-m", "payorch", "applications", "create", "--name", name,
         "--environment", "SANDBOX", "--json"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    created = json.loads(done.stdout)
    body = {
        "merchant_account_id": created["merchant_account_id"],
        "external_reference": "bench",
        "amount": 1000,
        "currency": "CLP",
        "return_url": "https://shop.example/r",
    }
    return Tenant({"Authorization": f"Bearer {created['api_key']}"}, body)


async def measure_quiet(
    api: httpx.AsyncClient, plain: httpx.AsyncClient, stats_url: str, quiet: Tenant, count: int
) -> Figures:
    """``count`` creates one at a time, then the arrival of each one's notice (60 s at most)."""
    before = {e for e, _ in (await plain.get(stats_url)).json()["received"]}
    create_ms: list[float] = []
    answered: dict[str, float] = {}
    for _ in range(count):
        started = time.perf_counter()
        r = await api.post("/v1/payment-intents", json=quiet.body, headers=quiet.headers)
        create_ms.append((time.perf_counter() - started) * 1000)
        assert r.status_code == 201, r.text
        answered[r.json()["id"]] = time.time()
        await asyncio.sleep(QUIET_GAP_SECONDS)
    deadline = time.time() + 60
    while True:
        arrived = [(e, at) for e, at in (await plain.get(stats_url)).json()["received"] if e not in before]
        if len(arrived) >= count or time.time() > deadline:
            break
        await asyncio.sleep(0.2)
    intent_of: dict[str, str] = {}
    cursor = None
    while len(intent_of) < len(answered) + len(before):
        params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = (await api.get("/v1/events", params=params, headers=quiet.headers)).json()
        intent_of.update({e["id"]: e["data"]["payment_intent_id"] for e in page["items"]})
        cursor = page["next_cursor"]
        if cursor is None:
            break
    delay_ms = [(at - answered[intent_of[e]]) * 1000 for e, at in arrived if intent_of.get(e) in answered]
    assert len(delay_ms) == count, f"{len(delay_ms)} of {count} notices arrived"
    return Figures(create_ms, delay_ms)


async def ask_for_endpoints(api: httpx.AsyncClient, flood: Tenant, url: str, count: int) -> Counter[int]:
    """``count`` endpoint creates, 8 at a time: the status codes answered."""
    statuses: Counter[int] = Counter()
    queue = iter(range(count))

    async def one_lane() -> None:
        for n in queue:
            r = await api.post(
                "/v1/admin/webhook-endpoints", json={"url": f"{url}/{n}"}, headers=flood.headers
            )
            statuses[r.status_code] += 1

    await asyncio.gather(*(one_lane() for _ in range(8)))
    return statuses


async def flood_intents(
    api: httpx.AsyncClient, flood: Tenant, stop: asyncio.Event, lanes: int, rate: float
) -> Counter[int]:
    """Intents created in a loop, ``lanes`` at a time, ``rate`` a second at most (0: no pause),
    until ``stop``: the status codes answered."""
    statuses: Counter[int] = Counter()
    started = time.perf_counter()

    async def one_lane() -> None:
        while not stop.is_set():
            if rate:
                sent = sum(statuses.values())
                await asyncio.sleep(max(0.0, started + sent / rate - time.perf_counter()))
            r = await api.post("/v1/payment-intents", json=flood.body, headers=flood.headers)
            statuses[r.status_code] += 1

    await asyncio.gather(*(one_lane() for _ in range(lanes)))
    return statuses


def row(label: str, figures: Figures) -> str:
    c, d = figures.create_ms, figures.delay_ms
    return (
        f"| {label} | {statistics.median(c):.1f} | {percentile(c, 99):.1f} | "
        f"{statistics.median(d):.1f} | {percentile(d, 99):.1f} | {max(d):.1f} |"
    )


async def run(args: argparse.Namespace, database_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYORCH_")}
    env.update(
        PYTHONPATH=str(ROOT / "src"),
        PAYORCH_DATABASE_URL=database_url,
        PAYORCH_SECRET_KEY=SECRET_KEY,
        PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE="true",
    )
    subprocess.run([sys.executable, "-m", "payorch", "migrate"], env=env, capture_output=True, check=True)
    quiet, flood = create_tenant(env, "quiet"), create_tenant(env, "flood")
    port = free_port()  # for `payorch serve`
    base = f"http://127.0.0.1:{port}"
    hanging, hanging_url = hanging_receiver()
    receiver = server = None
    with tempfile.TemporaryFile("w+") as log:
        try:
            receiver = subprocess.Popen(
                [sys.executable, str(ROOT / "bench" / "webhook_receiver.py")], stdout=subprocess.PIPE, text=True
            )
            receiver_url = receiver.stdout.readline().strip()  # type: ignore[union-attr]
            server = subprocess.Popen(
                [sys.executable, "-m", "payorch", "serve", "--port", str(port)],
                env={**env, "PAYORCH_PUBLIC_URL": base}, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            limits = httpx.Limits(max_connections=64)
            async with (
                httpx.AsyncClient(base_url=base, trust_env=False, limits=limits, timeout=60) as api,
                httpx.AsyncClient(trust_env=False) as plain,
            ):
                await wait_for(api, server, log)
                r = await api.post(
                    "/v1/admin/webhook-endpoints", json={"url": f"{receiver_url}/quiet"}, headers=quiet.headers
                )
                assert r.status_code == 201, r.text
                stats_url = f"{receiver_url}/__stats"
                await measure_quiet(api, plain, stats_url, quiet, 30)  # warm-up, not counted
                alone = await measure_quiet(api, plain, stats_url, quiet, args.quiet_intents)

                started = time.perf_counter()
                endpoints = await ask_for_endpoints(api, flood, hanging_url, args.flood_endpoints)
                asked_in = time.perf_counter() - started
                stop = asyncio.Event()
                flooding = asyncio.create_task(
                    flood_intents(api, flood, stop, args.flood_concurrency, args.flood_rate)
                )
                await asyncio.sleep(2.0)  # the flood's deliveries are queued and timing out
                flooded = await measure_quiet(api, plain, stats_url, quiet, args.quiet_intents)
                stop.set()
                intents = await flooding
                flood_seconds = time.perf_counter() - started - asked_in
                queued = await flood_deliveries(api, flood)
        finally:
            for process in (server, receiver):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=30)
            hanging.close()

    print(
        f"flooding tenant: {args.flood_endpoints} endpoint creates in {asked_in:.1f}s answered "
        f"{dict(sorted(endpoints.items()))}; intents in {flood_seconds:.1f}s answered "
        f"{dict(sorted(intents.items()))} ({intents[201] / flood_seconds:.0f}/s created); "
        f"{queued} deliveries queued for its endpoints, at most {endpoints[201]} per event"
    )
    print("| quiet tenant | create p50 ms | create p99 ms | notice delay p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|")
    print(row("no flood", alone))
    pace = f"{args.flood_rate:g}/s" if args.flood_rate else "no pause"
    print(row(f"flood ({endpoints[201]} endpoints, intents in a loop, {pace})", flooded))
    create = statistics.median(flooded.create_ms) / statistics.median(alone.create_ms)
    delay = statistics.median(flooded.delay_ms) / statistics.median(alone.delay_ms)
    print(f"flood / no flood: create p50 {create:.2f}, notice delay p50 {delay:.2f}")


async def wait_for(api: httpx.AsyncClient, server: subprocess.Popen[str], log: IO[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        if server.poll() is not None:
            log.seek(0)
            raise SystemExit(f"payorch serve exited early:\n{log.read()}")
        try:
            await api.get("/v1/payment-intents/payi_x")
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise SystemExit("payorch serve did not answer in 60 s") from None
            await asyncio.sleep(0.1)


async def flood_deliveries(api: httpx.AsyncClient, flood: Tenant) -> int:
    """The flooding tenant's deliveries, counted through its own list (pages of 100)."""
    total, cursor = 0, None
    while True:
        params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = (await api.get("/v1/admin/webhook-deliveries", params=params, headers=flood.headers)).json()
        total += len(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return total


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sqlite", action="store_true", help="a temporary SQLite file, not PostgreSQL")
    parser.add_argument("--quiet-intents", type=int, default=300)
    parser.add_argument("--flood-endpoints", type=int, default=4000)
    parser.add_argument("--flood-concurrency", type=int, default=1)
    parser.add_argument(
        "--flood-rate",
        type=float,
        default=3.0,
        help="the flood's intents a second (default: the attack's 101 in 35 s); 0: no pause",
    )
    args = parser.parse_args()
    if args.sqlite:
        with tempfile.TemporaryDirectory() as directory:
            await run(args, f"sqlite:///{directory}/bench.db")
        return
    url = await create_database(ADMIN_URL)
    try:
        await run(args, url)
    finally:
        await drop_database(ADMIN_URL, url)


if __name__ == "__main__":
    asyncio.run(main())
