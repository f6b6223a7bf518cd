"""Benchmark: does a large database slow the API down? Create, read and the first page of each
list on an empty database and on one seeded with N intents (default 10,000,000) with their
payments, events, webhook deliveries and delivery attempts, side by side in one run; then create
p99 on the large database while the worker's attempt purge (webhook-attempts-purge) runs.

    PYTHONPATH=src:. python -m bench.growth [--intents 10000000] [--requests 300] [--keep]
        [--admin-url postgresql://postgres@127.0.0.1:5432/test]

Databases: payorch_growth (seeded) and payorch_growth_empty (100 intents: one full page of
each list, so both sides render the same rows), created, migrated and dropped by
the bench (--keep leaves them). Disk: about 3 GB per million intents; check ``df -h`` first.

Seeding (no API): intents and payments by COPY (bench/seed_payments.py, spread over the past
year, time-ordered ids); then, in SQL from those rows, one ``payment_intent.created`` event, one
SUCCEEDED delivery to the application's endpoint and one attempt per intent. The event payload,
delivery and attempt are copies of real ones: the bench first creates one intent through the API
and takes its event as the template (only the intent's id, amount, reference and time change).
Attempts are spread over the past year like their intents, so about 11/12 of them are past the
30-day retention when the purge runs.

Timing: sequential requests through the whole ASGI stack in-process (middleware, API key, rate
limit out of the way, query, JSON; no network), the two databases interleaved request by request
so machine load falls on both alike. The purge runs in its own process (a Worker running only
the purge job, as ``payorch worker`` would) while creates are timed. The load average is printed
with each figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time

import asyncpg

from bench.kit import SECRET_KEY as SECRET
from bench.kit import create_database, drop_database, load, summary
from bench.listing import Target
from bench.seeding import seed
from payorch.config import Settings
from payorch.runtime import Runtime
from payorch.worker.jobs import PurgeWebhookAttempts
from payorch.worker.runner import Worker

SEEDED, EMPTY = "payorch_growth", "payorch_growth_empty"
# The "empty" database holds one full page of each list, so both render 100 rows per page.
BASELINE = 100
YEAR = "interval '365 days'"
LISTS = {
    "list_payment_intents": "/v1/payment-intents?limit=100",
    "list_payments": "/v1/payments?limit=100",
    "list_events": "/v1/events?limit=100",
    "list_deliveries": "/v1/admin/webhook-deliveries?limit=100",
}


class Growth(Target):
    merchant: str = ""
    endpoint: str = ""
    last_intent: str = ""

    async def prepare(self) -> None:
        """An endpoint (its deliveries are seeded and created) and the merchant account."""
        assert self.client is not None
        headers = {"Authorization": f"Bearer {self.api_key}"}
        made = await self.client.post(
            "/v1/admin/webhook-endpoints", json={"url": "https://hooks.example/pay"}, headers=headers
        )
        assert made.status_code == 201, made.text
        self.endpoint = made.json()["data"]["id"]
        conn = await asyncpg.connect(self.url)
        try:
            self.merchant = await conn.fetchval(
                "SELECT id FROM merchant_accounts WHERE application_id = $1", self.application_id
            )
        finally:
            await conn.close()

    async def get(self, scenario: str, url: str) -> None:
        """Timed as in Target.get, which expects a list; a list's page here is never empty."""
        assert self.client is not None
        auth = {"Authorization": f"Bearer {self.api_key}"}
        t0 = time.perf_counter()
        answer = await self.client.get(url, headers=auth)
        self.samples.setdefault(scenario, []).append((time.perf_counter() - t0) * 1000)
        assert answer.status_code == 200, answer.text
        assert scenario not in LISTS or answer.json()["items"]

    async def create(self, i: int) -> None:
        assert self.client is not None
        body = {
            "merchant_account_id": self.merchant,
            "external_reference": f"growth-{i}",
            "amount": 1500,
            "currency": "CLP",
            "return_url": "https://shop.example/return",
        }
        headers = {"Authorization": f"Bearer {self.api_key}"}
        started = time.perf_counter()
        response = await self.client.post("/v1/payment-intents", json=body, headers=headers)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 201, response.text
        self.last_intent = response.json()["id"]
        self.samples.setdefault("create", []).append(elapsed)


async def seed_rest(url: str, template_intent: str) -> None:
    """Events, deliveries and attempts for every seeded intent, copied from the real ones of
    ``template_intent`` (created through the API)."""
    conn = await asyncpg.connect(url)
    try:
        event = await conn.fetchrow("SELECT * FROM events WHERE payment_intent_id = $1", template_intent)
        delivery = await conn.fetchrow("SELECT * FROM webhook_deliveries WHERE event_id = $1", event["id"])
        intent = await conn.fetchrow("SELECT * FROM payment_intents WHERE id = $1", template_intent)
        # The template payload with the intent's own values put in.
        payload = (
            event["payload"]
            .replace(template_intent, "\x01")
            .replace(f'"amount":{intent["amount"]}', '"amount":\x02')
            .replace(intent["external_reference"], "\x03")
        )
        seeded = "pi.id <> $1"
        await conn.execute("SET synchronous_commit = off")
        await conn.execute(
            "INSERT INTO events (id, application_id, type, payment_intent_id, payload, created_at) "
            "SELECT 'evt_' || substr(pi.id, 6), pi.application_id, $2, pi.id, "
            "replace(replace(replace($3, chr(1), pi.id), chr(2), pi.amount::text), chr(3), "
            "pi.external_reference), pi.created_at "
            f"FROM payment_intents pi WHERE {seeded} ORDER BY pi.id",
            template_intent,
            event["type"],
            payload,
        )
        await conn.execute(
            "INSERT INTO webhook_deliveries (id, application_id, endpoint_id, event_id, event_type, "
            "status, attempts, schedule_attempts, next_attempt_at, leased_until, lease_token, "
            "last_attempt_at, response_status, response_excerpt, error, created_at, updated_at) "
            "SELECT 'whd_' || substr(e.id, 5), e.application_id, $1, e.id, e.type, 'SUCCEEDED', 1, "
            "1, NULL, NULL, NULL, e.created_at + interval '40 ms', 200, NULL, NULL, e.created_at, "
            "e.created_at + interval '40 ms' FROM events e WHERE e.id <> $2 ORDER BY e.seq",
            delivery["endpoint_id"],
            event["id"],
        )
        await conn.execute(
            "INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, duration_ms, "
            "response_status, response_excerpt, error) "
            "SELECT d.id, 1, d.created_at + interval '5 ms', 35, 200, NULL, NULL "
            "FROM webhook_deliveries d WHERE d.id <> $1 ORDER BY d.created_at",
            delivery["id"],
        )
        for table in ("events", "webhook_deliveries", "webhook_delivery_attempts"):
            await conn.execute(f"ANALYZE {table}")
    finally:
        await conn.close()


async def sizes(url: str) -> dict[str, object]:
    conn = await asyncpg.connect(url)
    try:
        counts = {
            t: await conn.fetchval(f"SELECT count(*) FROM {t}")  # noqa: S608 - constants
            for t in (
                "payment_intents",
                "payments",
                "events",
                "webhook_deliveries",
                "webhook_delivery_attempts",
            )
        }
        counts["database_bytes"] = await conn.fetchval("SELECT pg_database_size(current_database())")
    finally:
        await conn.close()
    return counts


async def rounds(targets: list[Growth], n: int, offset: int) -> None:
    for i in range(n):
        for target in targets:
            await target.create(offset + i)
            await target.get("read", f"/v1/payment-intents/{target.last_intent}")
            for scenario, path in LISTS.items():
                await target.get(scenario, path)


PURGE_TIMING_SECONDS = 600  # creates are timed while the purge runs, up to this long


def purge_process(url: str) -> subprocess.Popen[str]:
    code = "import asyncio,sys;from bench.growth import run_purge;asyncio.run(run_purge(sys.argv[1]))"
    started = subprocess.Popen(  # noqa: S603 - our own module
        [sys.executable, "-c", code, url], stdout=subprocess.PIPE, text=True
    )
    assert started.stdout is not None
    started.stdout.readline()  # "ready": imports done, the timed creates may start
    return started


async def run_purge(url: str) -> None:
    """A worker with only the purge job, until it has nothing left (then it stops)."""
    from payorch.composition import build_runtime

    runtime = build_runtime(settings(url))
    job = PurgeUntilIdle()
    job.worker = Worker(runtime, [job])
    print("ready", flush=True)
    started = time.perf_counter()
    try:
        await job.worker.run()
    finally:
        await runtime.close()
    seconds = time.perf_counter() - started
    total = job.total
    print(
        json.dumps(
            {
                "purged_attempts": total,
                "purge_seconds": round(seconds, 1),
                "purged_per_second": round(total / seconds),
            }
        ),
        flush=True,
    )


class PurgeUntilIdle(PurgeWebhookAttempts):
    """The worker's purge job; stops its worker once nothing is left to purge."""

    worker: Worker | None = None
    total = 0

    async def run_once(self, runtime: Runtime) -> int:
        done = await super().run_once(runtime)
        self.total += done
        if done == 0 and self.worker is not None:
            self.worker.stop()
        return done


def settings(url: str) -> Settings:
    return Settings.model_validate(
        {
            "database_url": url,
            "secret_key": SECRET,
            "rate_limit": "1000000/second",
            "simulator_enabled": False,
        }
    )


async def main_async(admin: str, intents: int, requests: int, keep: bool) -> None:
    targets: list[Growth] = []
    try:
        for name, size in ((SEEDED, intents), (EMPTY, BASELINE)):
            await drop_database(admin, name)
            url = await create_database(admin, name, migrate=True)
            started = time.perf_counter()
            seeded = await seed(url, size, None)
            target = Growth(name, url, str(seeded["application_id"]), str(seeded["api_key"]))
            await target.open(1)
            await target.prepare()
            await target.create(-1)  # the template: a real intent, event and delivery
            if size:
                await seed_rest(url, target.last_intent)
            print(
                json.dumps(
                    {
                        "database": name,
                        **(await sizes(url)),
                        "seed_seconds": round(time.perf_counter() - started, 1),
                        "load": load(),
                    }
                ),
                flush=True,
            )
            targets.append(target)
        await rounds(targets, 20, 0)  # warm up
        for target in targets:
            target.samples.clear()
        print(json.dumps({"phase": "side by side", "load_before": load()}), flush=True)
        await rounds(targets, requests, 1000)
        for target in targets:
            print(
                json.dumps({"database": target.label, **{k: summary(v) for k, v in target.samples.items()}}),
                flush=True,
            )
        big, empty = targets
        for key in big.samples:
            ratio = summary(big.samples[key])["p50_ms"] / summary(empty.samples[key])["p50_ms"]
            print(json.dumps({f"p50_ratio_{key}": round(ratio, 2)}), flush=True)
        print(json.dumps({"phase": "after", "load": load()}), flush=True)
        # Create while the purge runs (in its own process, like a worker).
        # The control: as many creates just before the purge, on the same database.
        big.samples.clear()
        for i in range(5 * requests):
            await big.create(10**5 + i)
        print(
            json.dumps(
                {"database": big.label, "before_purge": summary(big.samples["create"]), "load": load()}
            ),
            flush=True,
        )
        big.samples.clear()
        purge = purge_process(big.url)
        print(json.dumps({"phase": "create during purge", "load_before": load()}), flush=True)
        i = 10**6
        began = time.perf_counter()
        # Creates for as long as the purge runs (at most PURGE_TIMING_SECONDS).
        while purge.poll() is None and time.perf_counter() - began < PURGE_TIMING_SECONDS:
            await big.create(i)
            i += 1
        timed = round(time.perf_counter() - began, 1)
        print(
            json.dumps(
                {
                    "database": big.label,
                    "during_purge": summary(big.samples["create"]),
                    "creates_timed_for_seconds": timed,
                    "load": load(),
                }
            ),
            flush=True,
        )
        assert purge.stdout is not None
        print(purge.stdout.read().strip(), flush=True)
        purge.wait()
    finally:
        for target in targets:
            await target.close()
        if not keep:
            for name in (SEEDED, EMPTY):
                await drop_database(admin, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--intents", type=int, default=10_000_000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    asyncio.run(main_async(args.admin_url, args.intents, args.requests, args.keep))


if __name__ == "__main__":
    main()
