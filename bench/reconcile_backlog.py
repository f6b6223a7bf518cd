"""Benchmark: does one tenant's reconciliation backlog delay another tenant's run for today?
Tenant B's run, alone (the baseline) and right after tenant A queued its backlog, side by side
in one run, with two workers taking runs (the backlog probe of issue 37).

    PYTHONPATH=src:. .venv/bin/python -m bench.reconcile_backlog [--sqlite] [--days 1500] \
        [--backlog 31] [--payments 5] [--rounds 5]

In process: the app (ASGI, httpx) and two worker loops, each calling the worker's job
(``ReconcileDays().run_once``) again at once while it finds work and after 50 ms when idle
(``payorch worker`` waits its 30 s interval there; the pause keeps the poll out of the figures).
Two SANDBOX applications with MOCK connectors; A's is backdated 400 days so past days are
accepted. Every paid day has ``--payments`` whole sandbox payments through each provider: B's
today and A's last ``--backlog`` days (made with the clock moved back to the day, so each of A's
runs costs about what B's does). Each round: B asks for today and the time from its request to
DONE is the baseline (the run's own ``requested_at`` -> ``finished_at``); then A asks for
``--days`` past days, 8 at a time, while the workers pause (the probe queued 1,500 in 4.8 s,
faster than workers drain; at most PAYORCH_RECONCILIATION_MAX_QUEUED_RUNS wait at once, the rest
answer 409 LIMIT_EXCEEDED, or 400 beyond the days accepted), B asks for today again, the workers
go on, and B's time is taken again; then the round waits until A's backlog has drained (how long
it took, about what B would have waited first come first served, is printed, and how many of A's
runs started while B's waited). One B run before the rounds warms up. Target: B behind the backlog within 2x its baseline.

PostgreSQL by default (PAYORCH_BENCH_POSTGRES_URL: a fresh database is made and dropped);
``--sqlite``: a temporary SQLite file. Prints the load average beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import select, update

from bench.kit import ADMIN_URL, SECRET_KEY, create_database, drop_database, load, mock_application
from bench.payment_client import PROVIDERS, one_payment
from payorch.app import create_app
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.db.migrate import upgrade_in_thread
from payorch.db.tables.foundation import applications
from payorch.db.tables.reconciliation import reconciliation_runs as runs
from payorch.reconciliation.job import ReconcileDays
from payorch.runtime import Runtime

IDLE_SECONDS = 0.05
POLL_SECONDS = 0.01
WORKERS = 2
ASKING = 8  # tenant A's requests at once
BACKDATED = timedelta(days=400)


class ShiftedClock:
    """The system's clock, moved back by ``back`` while tenant A's past days are paid: its
    payments then lie on their own day at payorch and at the simulated providers alike."""

    def __init__(self) -> None:
        self.back = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) - self.back


async def tenant(runtime: Runtime, *, backdated: bool) -> tuple[str, str, str]:
    """(application id, merchant id, API key) of a SANDBOX application with MOCK connectors."""
    app = await mock_application(runtime, "shop")
    if backdated:  # its past days are then its own (the days accepted start at its creation)
        since = runtime.clock.now() - BACKDATED
        async with runtime.database.transaction() as conn:
            await conn.execute(
                update(applications).where(applications.c.id == app.application_id).values(created_at=since)
            )
    return app.application_id, app.merchant_account_id, app.api_key


async def worker(runtime: Runtime, go: asyncio.Event, stop: asyncio.Event) -> None:
    job = ReconcileDays()
    while not stop.is_set():
        await go.wait()
        if not await job.run_once(runtime):
            await asyncio.sleep(IDLE_SECONDS)


async def pay(transport: httpx.ASGITransport, public: str, merchant: str, key: str, count: int) -> None:
    """``count`` whole sandbox payments through each provider."""
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(
        transport=transport, base_url=public, timeout=120, headers=headers
    ) as client:
        for n, provider in enumerate(p for p in PROVIDERS.values() if p != "auto"):
            for i in range(count):
                await one_payment(client, merchant, provider, n * count + i)


async def ask_days(client: httpx.AsyncClient, key: str, today: date, days: int) -> list[int]:
    """Tenant A asks for ``days`` past days, ASKING at a time (as the probe did): the statuses."""
    limit = asyncio.Semaphore(ASKING)

    async def one(back: int) -> int:
        day = (today - timedelta(days=back)).isoformat()
        async with limit:
            answer = await client.post(
                "/v1/reports/reconciliation", json={"date": day}, headers={"Authorization": f"Bearer {key}"}
            )
        return answer.status_code

    return list(await asyncio.gather(*(one(back) for back in range(1, days + 1))))


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def timed_run(client: httpx.AsyncClient, key: str, day: date, go: asyncio.Event) -> dict[str, str]:
    """Ask for ``day``, let the workers go on, and wait for its run: the run, DONE."""
    headers = {"Authorization": f"Bearer {key}"}
    asked = await client.post("/v1/reports/reconciliation", json={"date": day.isoformat()}, headers=headers)
    assert asked.status_code == 202, asked.text
    go.set()
    while True:
        answer = await client.get(
            "/v1/reports/reconciliation", params={"date": day.isoformat()}, headers=headers
        )
        run = answer.json()["run"]
        if run["status"] in ("DONE", "FAILED"):
            assert run["status"] == "DONE", run
            return dict(run)
        await asyncio.sleep(POLL_SECONDS)


def seconds(run: dict[str, str]) -> float:
    """From the run's request to its end."""
    return (_at(run["finished_at"]) - _at(run["requested_at"])).total_seconds()


async def started_between(runtime: Runtime, application_id: str, run: dict[str, str]) -> int:
    """The application's runs started after ``run`` was asked for and before it started."""
    query = select(runs.c.id).where(
        runs.c.application_id == application_id,
        runs.c.started_at > _at(run["requested_at"]),
        runs.c.started_at < _at(run["started_at"]),
    )
    async with runtime.database.transaction() as conn:
        return len((await conn.execute(query)).all())


async def waiting_runs(runtime: Runtime, application_id: str) -> int:
    query = select(runs.c.id).where(
        runs.c.application_id == application_id, runs.c.status.in_(("QUEUED", "RUNNING"))
    )
    async with runtime.database.transaction() as conn:
        return len((await conn.execute(query)).all())


async def measure(
    database_url: str, days: int, backlog: int, payments: int, rounds: int
) -> dict[str, object]:
    await asyncio.to_thread(upgrade_in_thread, database_url)
    public = "http://bench"
    settings = Settings.model_validate(
        {
            "database_url": database_url,
            "secret_key": SECRET_KEY,
            "public_url": public,
            "rate_limit": "1000000/second",
        }
    )
    clock = ShiftedClock()
    runtime = build_runtime(settings, clock=clock)
    stop, go = asyncio.Event(), asyncio.Event()
    try:
        transport = httpx.ASGITransport(app=create_app(runtime=runtime))
        a_id, a_merchant, a_key = await tenant(runtime, backdated=True)
        _, b_merchant, b_key = await tenant(runtime, backdated=False)
        async with httpx.AsyncClient(transport=transport, base_url=public, timeout=120) as client:
            today = runtime.clock.now().date()
            for back in range(backlog, -1, -1):  # A's past days, then B's today
                clock.back = timedelta(days=back)
                merchant, key = (b_merchant, b_key) if back == 0 else (a_merchant, a_key)
                await pay(transport, public, merchant, key, payments)
            clock.back = timedelta(0)
            loops = [asyncio.create_task(worker(runtime, go, stop)) for _ in range(WORKERS)]
            baseline: list[float] = []
            behind: list[float] = []
            overtaken: list[int] = []
            drained: list[float] = []
            answers: Counter[int] = Counter()
            await timed_run(client, b_key, today, go)  # warm up: the first run pays for imports and caches
            for _ in range(rounds):
                baseline.append(seconds(await timed_run(client, b_key, today, go)))
                go.clear()  # A's requests outpace the workers, as in the probe: all of them first
                for status in await ask_days(client, a_key, today, days):
                    answers[status] += 1
                started = time.perf_counter()
                run = await timed_run(client, b_key, today, go)
                behind.append(seconds(run))
                overtaken.append(await started_between(runtime, a_id, run))
                while await waiting_runs(runtime, a_id):
                    await asyncio.sleep(POLL_SECONDS)
                drained.append(time.perf_counter() - started)
            stop.set()
            go.set()
            await asyncio.gather(*loops)
        base, with_backlog = statistics.median(baseline), statistics.median(behind)
        return {
            "database": runtime.database.engine.dialect.name,
            "workers": WORKERS,
            "payments_per_day": payments * 3,
            "a_days_with_payments": backlog,
            "a_days_asked_per_round": days,
            "a_answers_all_rounds": {str(status): count for status, count in sorted(answers.items())},
            "b_baseline_s": [round(s, 2) for s in baseline],
            "b_behind_backlog_s": [round(s, 2) for s in behind],
            "ratio_median": round(with_backlog / base, 2),
            "a_runs_started_while_b_waited": overtaken,
            "a_backlog_drained_s": [round(s, 1) for s in drained],
            "load": load(),
        }
    finally:
        stop.set()
        go.set()
        await runtime.close()


async def main_async(sqlite: bool, days: int, backlog: int, payments: int, rounds: int) -> dict[str, object]:
    if sqlite:
        with tempfile.TemporaryDirectory() as folder:
            return await measure(f"sqlite:///{Path(folder) / 'bench.db'}", days, backlog, payments, rounds)
    url = await create_database(ADMIN_URL)
    try:
        return await measure(url, days, backlog, payments, rounds)
    finally:
        await drop_database(ADMIN_URL, url)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--days", type=int, default=1500, help="past days tenant A asks for each round")
    parser.add_argument("--backlog", type=int, default=31, help="past days of A with payments")
    parser.add_argument("--payments", type=int, default=5, help="payments per provider of each paid day")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(
        json.dumps(asyncio.run(main_async(args.sqlite, args.days, args.backlog, args.payments, args.rounds))),
        flush=True,
    )


if __name__ == "__main__":
    main()
