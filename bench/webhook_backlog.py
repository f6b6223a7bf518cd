"""Benchmark: does a dead endpoint's backlog cost the healthy endpoints anything? Delivery latency
to a healthy endpoint without, then with, 100,000 deliveries queued (all due) for one dead
endpoint of another application, in one run, one `payorch worker` process.

    PYTHONPATH=src PAYORCH_RATE_LIMIT=100000/second python bench/webhook_backlog.py \
        [--backlog 100000] [--latency-events 200] [--dead-for 3600] [--rounds 1]

Needs PostgreSQL (PAYORCH_BENCH_POSTGRES_URL, default postgresql://postgres@127.0.0.1:5432/test):
a fresh database is created and dropped. The dead endpoint refuses connections (a closed port on
the receiver's loopback address); the backlog is inserted with SQL (one event, 100,000
deliveries, all due), which is what 100,000 queued notices look like to the claim; by default the
endpoint has been failing for an hour (``--dead-for``; 0: it dies as the backlog lands). Latency =
arrival at the receiver - the moment the POST /v1/payment-intents answered (its transaction
committed before), intents created one at a time, 20 ms apart.

``--rounds N``: N rounds of (without, with) in one run, the backlog (its deliveries, their
attempts) deleted and the dead endpoint's failure state reset between rounds, so both sides are
measured N times alternately; it prints each round's figures and the median of the p50 ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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

BACKLOG_SQL = """
INSERT INTO webhook_deliveries (id, application_id, endpoint_id, event_id, event_type, status,
    attempts, schedule_attempts, next_attempt_at, created_at, updated_at)
SELECT 'whd_backlog' || lpad(n::text, 8, '0'), $1, $2, $3, 'payment_intent.created', 'PENDING',
    0, 0, now() - interval '1 second', now(), now()
FROM generate_series(1, $4) AS n
"""


async def latencies(
    api: httpx.AsyncClient,
    plain: httpx.AsyncClient,
    base: str,
    headers: dict[str, str],
    body: dict[str, object],
    count: int,
) -> list[float]:
    """ms from each intent's commit to its notice's arrival at the healthy endpoint."""
    before = {e for e, _ in (await plain.get(f"{base}/__stats")).json()["received"]}
    answered: dict[str, float] = {}
    for _ in range(count):
        r = await api.post("/v1/payment-intents", json=body, headers=headers)
        assert r.status_code == 201, r.text
        answered[r.json()["id"]] = time.time()
        await asyncio.sleep(0.02)
    deadline = time.time() + 60
    while True:
        fresh = [
            (e, at) for e, at in (await plain.get(f"{base}/__stats")).json()["received"] if e not in before
        ]
        if len(fresh) >= count or time.time() > deadline:
            break
        await asyncio.sleep(0.2)
    intent_of = {}
    page = (await api.get("/v1/events", params={"limit": 100}, headers=headers)).json()
    cursor = page["next_cursor"]
    items = page["items"]
    while cursor:
        page = (await api.get("/v1/events", params={"limit": 100, "cursor": cursor}, headers=headers)).json()
        items += page["items"]
        cursor = page["next_cursor"]
    for e in items:
        intent_of[e["id"]] = e["data"].get("payment_intent_id")
    result = [(at - answered[intent_of[e]]) * 1000 for e, at in fresh if intent_of.get(e) in answered]
    assert len(result) == count, (
        f"{len(result)} of {count} notices matched: {len(fresh)} arrivals counted, "
        f"{len({e for e, _ in fresh})} distinct events"
    )
    return result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backlog", type=int, default=100_000)
    parser.add_argument("--latency-events", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=1, help="alternating (without, with) pairs")
    parser.add_argument(
        "--dead-for",
        type=int,
        default=3600,
        help="seconds the dead endpoint has been failing (its failure streak); 0: it just died",
    )
    args = parser.parse_args()
    url = await create_database(ADMIN_URL)
    receiver = worker = None
    try:
        upgrade_in_thread(url)
        settings = Settings(
            database_url=url,
            secret_key=SECRET_KEY,
            public_url="http://testserver",
            sandbox_webhooks_allow_private=True,
        )  # type: ignore[arg-type]
        runtime = build_runtime(settings)
        async with runtime.database.transaction() as db:
            healthy_app = await create_application(
                db, runtime.clock, name="healthy", environment="SANDBOX", merchant_name="shop"
            )
            dead_app = await create_application(
                db, runtime.clock, name="dead", environment="SANDBOX", merchant_name="shop"
            )
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
        headers = {"Authorization": f"Bearer {healthy_app.api_key}"}
        r = await api.post("/v1/admin/webhook-endpoints", json={"url": f"{base}/healthy"}, headers=headers)
        assert r.status_code == 201, r.text
        dead_headers = {"Authorization": f"Bearer {dead_app.api_key}"}
        dead_url = base.rsplit(":", 1)[0] + ":3000/dead"  # nothing listens there: refused
        r = await api.post("/v1/admin/webhook-endpoints", json={"url": dead_url}, headers=dead_headers)
        assert r.status_code == 201, r.text
        dead_endpoint = r.json()["data"]["id"]
        body = {
            "merchant_account_id": healthy_app.merchant_account_id,
            "external_reference": "bench",
            "amount": 1000,
            "currency": "CLP",
            "return_url": "https://shop.example/r",
        }
        dead_body = {**body, "merchant_account_id": dead_app.merchant_account_id}
        r = await api.post("/v1/payment-intents", json=dead_body, headers=dead_headers)
        assert r.status_code == 201, r.text
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "PAYORCH_DATABASE_URL": url,
            "PAYORCH_SECRET_KEY": SECRET_KEY,
            "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE": "true",
        }
        worker = subprocess.Popen(
            [sys.executable, "-m", "payorch", "worker"], env=env, stderr=subprocess.DEVNULL
        )
        await asyncio.sleep(3.0)  # interpreter start-up; the dead app's one notice is tried

        await latencies(api, plain, base, headers, body, 30)  # warm-up, not counted
        pg = await asyncpg.connect(url)
        event_id = await pg.fetchval(
            "SELECT id FROM events WHERE application_id = $1", dead_app.application_id
        )
        ratios: list[float] = []
        for round_number in range(1, args.rounds + 1):
            if round_number > 1:
                await remove_backlog(pg, dead_endpoint)
            ratios.append(
                await one_round(
                    api,
                    plain,
                    pg,
                    base,
                    headers,
                    body,
                    args,
                    round_number,
                    dead_app.application_id,
                    dead_endpoint,
                    event_id,
                )
            )
        await pg.close()
        if args.rounds > 1:
            print(f"median p50 ratio over {args.rounds} rounds: {statistics.median(ratios):.2f}")
        await api.aclose()
        await plain.aclose()
        await runtime.close()
    finally:
        stop(worker, receiver)
        await drop_database(ADMIN_URL, url)


async def remove_backlog(pg: asyncpg.Connection, dead_endpoint: str) -> None:
    """Back to no backlog: the backlog's deliveries and attempts gone, the endpoint healthy on
    record (no streak, breaker or backoff), as before the first round."""
    await pg.execute("DELETE FROM webhook_delivery_attempts WHERE delivery_id LIKE 'whd_backlog%'")
    await pg.execute("DELETE FROM webhook_deliveries WHERE id LIKE 'whd_backlog%'")
    await pg.execute(
        "UPDATE webhook_endpoints SET failing_since = NULL, failed_attempts = 0,"
        " breaker_until = NULL, backoff_until = NULL WHERE id = $1",
        dead_endpoint,
    )
    await asyncio.sleep(1.0)  # leases of deleted deliveries end with their attempts


async def one_round(
    api: httpx.AsyncClient,
    plain: httpx.AsyncClient,
    pg: asyncpg.Connection,
    base: str,
    headers: dict[str, str],
    body: dict[str, object],
    args: argparse.Namespace,
    round_number: int,
    dead_application: str,
    dead_endpoint: str,
    event_id: str,
) -> float:
    """One (without, with) pair; prints it and returns its p50 ratio."""
    attempts_before = await pg.fetchval("SELECT count(*) FROM webhook_delivery_attempts")
    without = await latencies(api, plain, base, headers, body, args.latency_events)
    t = time.perf_counter()
    await pg.execute(BACKLOG_SQL, dead_application, dead_endpoint, event_id, args.backlog)
    if args.dead_for:  # what the worker would have recorded over that time
        await pg.execute(
            "UPDATE webhook_endpoints SET failing_since = now() - make_interval(secs => $2),"
            " failed_attempts = 100 WHERE id = $1",
            dead_endpoint,
            float(args.dead_for),
        )
    inserted = time.perf_counter() - t
    await asyncio.sleep(2.0)  # the worker is now busy failing the backlog
    with_backlog = await latencies(api, plain, base, headers, body, args.latency_events)
    pending = await pg.fetchval(
        "SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'PENDING'",
        dead_endpoint,
    )
    attempts = await pg.fetchval("SELECT count(*) FROM webhook_delivery_attempts")
    attempts -= attempts_before

    if args.rounds > 1:
        print(f"round {round_number}")
    print(f"dead endpoint failing for {args.dead_for}s before the backlog")
    print(
        f"backlog: {args.backlog} deliveries for one dead endpoint inserted in {inserted:.1f}s; "
        f"{pending} still PENDING at the end, {attempts} attempts made in the round"
    )
    print("| commit -> arrival at a healthy endpoint | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|")
    for label, values in (
        ("no backlog", without),
        (f"{args.backlog:,} queued for a dead endpoint", with_backlog),
    ):
        print(
            f"| {label} | {statistics.median(values):.1f} | {percentile(values, 99):.1f} | {max(values):.1f} |"
        )
    ratio = statistics.median(with_backlog) / statistics.median(without)
    print(f"p50 ratio with/without backlog: {ratio:.2f}")
    return ratio


if __name__ == "__main__":
    asyncio.run(main())
