"""Benchmark of webhook deliveries: throughput of one `payorch worker` process, and the latency
from an event's commit to its first delivery attempt.

    PYTHONPATH=src python bench/webhook_deliveries.py [--events 1250] [--endpoints 4] [--latency-events 200]

Needs PostgreSQL (PAYORCH_BENCH_POSTGRES_URL, default postgresql://postgres@127.0.0.1:5432/test):
a fresh database is created and dropped. Events are produced the only way the API produces them
today: POST /v1/payment-intents (payment_intent.created), in process over ASGI.

1. Throughput: a backlog of events x endpoints deliveries is committed with no worker running;
   then one worker process starts; deliveries/s = deliveries / (last arrival - first arrival) at a
   local receiver that answers 200 (a separate uvicorn process on a loopback address).
2. Latency: the worker idles (LISTEN); intents are created one at a time, spaced out; latency =
   arrival at the receiver - the moment the POST's response arrived (the request's transaction
   commits before the response is sent, so this slightly under-counts by the ASGI hop) and
   - the moment the POST was sent (an upper bound that includes creating the intent).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.kit import ADMIN_URL, SECRET_KEY, create_database, drop_database, percentile, stop  # noqa: E402
from payorch.app import create_app  # noqa: E402
from payorch.applications.service import create_application  # noqa: E402
from payorch.composition import build_runtime  # noqa: E402
from payorch.config import Settings  # noqa: E402
from payorch.db.migrate import upgrade_in_thread  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1250)
    parser.add_argument("--endpoints", type=int, default=4)
    parser.add_argument("--latency-events", type=int, default=200)
    args = parser.parse_args()

    url = await create_database(ADMIN_URL)
    receiver = worker = None
    try:
        upgrade_in_thread(url)
        # The receiver listens on loopback: a private target, allowed for sandbox only when asked.
        # The rate limit is out of the way here: this measures the worker, not the API's limit
        # (whatever PAYORCH_RATE_LIMIT says; the default 100/second stopped the run at once).
        settings = Settings(database_url=url, secret_key=SECRET_KEY, public_url="http://testserver", sandbox_webhooks_allow_private=True, rate_limit="1000000/second")  # type: ignore[arg-type]
        runtime = build_runtime(settings)
        async with runtime.database.transaction() as db:
            app = await create_application(
                db, runtime.clock, name="bench", environment="SANDBOX", merchant_name="shop"
            )
        headers = {"Authorization": f"Bearer {app.api_key}"}
        receiver = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "webhook_receiver.py")],
            stdout=subprocess.PIPE,
            text=True,
        )
        base = receiver.stdout.readline().strip()  # type: ignore[union-attr]
        api = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(runtime=runtime)),
            base_url="http://testserver",
        )
        plain = httpx.AsyncClient(trust_env=False)
        for n in range(args.endpoints):
            r = await api.post(
                "/v1/admin/webhook-endpoints", json={"url": f"{base}/hook/{n}"}, headers=headers
            )
            assert r.status_code == 201, r.text
        body = {
            "merchant_account_id": app.merchant_account_id,
            "external_reference": "bench",
            "amount": 1000,
            "currency": "CLP",
            "return_url": "https://shop.example/r",
        }

        # 1. Throughput: commit a backlog, then start one worker.
        sem = asyncio.Semaphore(8)

        async def create() -> None:
            async with sem:
                r = await api.post("/v1/payment-intents", json=body, headers=headers)
                assert r.status_code == 201, r.text

        t = time.perf_counter()
        await asyncio.gather(*(create() for _ in range(args.events)))
        print(
            f"backlog: {args.events} events x {args.endpoints} endpoints committed in {time.perf_counter() - t:.1f}s",
            flush=True,
        )
        total = args.events * args.endpoints
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "PAYORCH_DATABASE_URL": url,
            "PAYORCH_SECRET_KEY": SECRET_KEY,
            "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE": "true",
        }
        started = time.time()
        worker = subprocess.Popen(
            [sys.executable, "-m", "payorch", "worker"], env=env, stderr=subprocess.DEVNULL
        )
        while True:
            stats = (await plain.get(f"{base}/__stats")).json()["received"]
            if len(stats) >= total:
                break
            if time.time() - started > 300:
                raise SystemExit(f"only {len(stats)} of {total} arrived")
            await asyncio.sleep(0.5)
        times = [t for _, t in stats]
        span = max(times) - min(times)
        rate = total / span
        recorded_deadline = time.time() + 60
        while time.time() < recorded_deadline:
            pg = await asyncpg.connect(url)
            done = await pg.fetchval(
                "SELECT count(*) FROM webhook_deliveries WHERE status = 'SUCCEEDED'"
            )
            await pg.close()
            if done == total:
                break
            await asyncio.sleep(0.2)
        recorded = time.time() - started
        print(
            f"throughput: {total} deliveries, first->last arrival {span:.2f}s = {rate:.0f} deliveries/s; "
            f"all recorded SUCCEEDED {recorded:.1f}s after the worker process started "
            f"(includes interpreter start-up)",
            flush=True,
        )

        # 2. Latency: one endpoint, the worker idle between events.
        for_latency = await api.post(
            "/v1/admin/webhook-endpoints", json={"url": f"{base}/latency"}, headers=headers
        )
        endpoint_ids = [
            e["id"]
            for e in (
                await api.get("/v1/admin/webhook-endpoints", params={"limit": 100}, headers=headers)
            ).json()["items"]
        ]
        for endpoint_id in endpoint_ids:
            if endpoint_id != for_latency.json()["data"]["id"]:
                await api.patch(
                    f"/v1/admin/webhook-endpoints/{endpoint_id}",
                    json={"enabled": False},
                    headers=headers,
                )
        await asyncio.sleep(1.0)
        sent: dict[str, tuple[float, float]] = {}
        for _ in range(args.latency_events):
            before = time.time()
            r = await api.post("/v1/payment-intents", json=body, headers=headers)
            after = time.time()
            sent[r.json()["id"]] = (before, after)
            await asyncio.sleep(0.02)
        await asyncio.sleep(1.0)
        events = {}
        cursor = None
        while True:
            params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
            page = (await api.get("/v1/events", params=params, headers=headers)).json()
            for e in page["items"]:
                events[e["id"]] = e["data"]["payment_intent_id"]
            cursor = page["next_cursor"]
            if not cursor:
                break
        stats = (await plain.get(f"{base}/__stats")).json()["received"]
        from_commit, from_send = [], []
        first_seen: dict[str, float] = {}
        for event_id, at in stats:
            first_seen.setdefault(event_id, at)
        for event_id, at in first_seen.items():
            intent = events.get(event_id)
            if intent in sent:
                from_commit.append((at - sent[intent][1]) * 1000)
                from_send.append((at - sent[intent][0]) * 1000)
        assert len(from_commit) == args.latency_events, len(from_commit)
        print(
            f"latency commit->first attempt over {len(from_commit)} events: "
            f"p50 {statistics.median(from_commit):.1f} ms, p99 {percentile(from_commit, 99):.1f} ms, "
            f"max {max(from_commit):.1f} ms; from POST sent: p50 {statistics.median(from_send):.1f} ms, "
            f"p99 {percentile(from_send, 99):.1f} ms",
            flush=True,
        )
        cpu = next(
            (
                line.split(":", 1)[1].strip()
                for line in open("/proc/cpuinfo")
                if line.startswith("model name")
            ),
            "?",
        )
        print(
            f"machine: nproc {os.cpu_count()}, {cpu}, Python {platform.python_version()}",
            flush=True,
        )
        await api.aclose()
        await plain.aclose()
        await runtime.close()
    finally:
        stop(worker, receiver)
        await drop_database(ADMIN_URL, url)


if __name__ == "__main__":
    asyncio.run(main())
