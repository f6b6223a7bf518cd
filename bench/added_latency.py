"""Benchmark: what payorch adds to a provider's latency, per create, checkout and return, read from
each answer's Server-Timing header (app, db, provider; docs/api.md) while the simulator answers
every provider call after a realistic delay (bench/provider_latency.py: lognormal, p50 120 ms,
p99 380 ms by default).

One payment = create intent -> checkout through provider A (one call: create the transaction)
-> the simulator page, "approve" (not measured: the buyer's browser) -> the buyer's return (one
call: commit) -> read the intent (AUTHORIZED). ``--count`` payments one after another
(``--concurrency`` buyers at once), one API process (uvicorn, payorch's HTTP protocol), no worker.

    PYTHONPATH=src:. .venv/bin/python -m bench.added_latency --count 300
    PYTHONPATH=src:. .venv/bin/python -m bench.added_latency --database sqlite --latency 120,380

Each step's line: p50/p99 in ms of the provider's share, of what payorch added (app + db, and
each), and of the answer's time at the client. Percentiles are taken per column, so a row's p99s
need not come from one request.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from urllib.parse import urljoin

import httpx

from bench.kit import (
    ADMIN_URL,
    ROOT,
    free_port,
    fresh_database,
    report,
    sandbox_application,
    server_env,
    started_process,
    summary,
)
from bench.payment_client import FORM_ACTION, PROVIDERS
from bench.provider_latency import VARIABLE
from payorch.http.server_protocol import IMPORT_STRING

STEPS = ("create", "checkout", "return")
ENTRY = re.compile(r"(app|db|provider);dur=([\d.]+)")
Samples = dict[str, dict[str, list[float]]]  # step -> column -> milliseconds


def record(samples: Samples, step: str, response: httpx.Response, seconds: float) -> None:
    parts = {name: float(ms) for name, ms in ENTRY.findall(response.headers["server-timing"])}
    columns = samples[step]
    columns["provider"].append(parts["provider"])
    columns["added"].append(parts["app"] + parts["db"])
    columns["app"].append(parts["app"])
    columns["db"].append(parts["db"])
    columns["client"].append(seconds * 1000)


async def timed(samples: Samples, step: str, request: Awaitable[httpx.Response]) -> httpx.Response:
    started = time.perf_counter()
    response = await request
    record(samples, step, response, time.perf_counter() - started)
    return response


async def one_payment(client: httpx.AsyncClient, merchant: str, n: int, samples: Samples) -> None:
    body = {
        "merchant_account_id": merchant,
        "external_reference": f"latency-{n}",
        "amount": 1990,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
    }
    intent = await timed(samples, "create", client.post("/v1/payment-intents", json=body))
    assert intent.status_code == 201, intent.text
    intent_id = intent.json()["id"]
    path = f"/v1/payment-intents/{intent_id}/checkout"
    answer = await timed(samples, "checkout", client.post(path, json={"provider": PROVIDERS["a"]}))
    assert answer.status_code == 200, answer.text
    checkout = answer.json()["checkout"]
    browser = {"Authorization": ""}  # the buyer's browser has no key
    page = await client.post(checkout["url"], data=checkout["fields"], headers=browser)
    action = FORM_ACTION.search(page.text)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    chosen = await client.post(
        urljoin(str(page.url), action.group(1) if action else ""),
        data={**fields, "outcome": "approve"},
        headers=browser,
    )
    assert chosen.status_code == 303, chosen.text[:300]
    back = await timed(samples, "return", client.get(chosen.headers["location"], headers=browser))
    assert back.status_code == 303, back.text[:300]
    read = await client.get(f"/v1/payment-intents/{intent_id}")
    assert read.json()["status"] == "AUTHORIZED", read.text


async def measure(url: str, api_key: str, merchant: str, count: int, concurrency: int) -> Samples:
    headers = {"Authorization": f"Bearer {api_key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        await one_payment(client, merchant, -1, defaultdict(lambda: defaultdict(list)))  # warm up
        samples: Samples = defaultdict(lambda: defaultdict(list))
        numbers = iter(range(count))

        async def buyer() -> None:
            for n in numbers:
                await one_payment(client, merchant, n, samples)

        await asyncio.gather(*(buyer() for _ in range(concurrency)))
    return samples


@contextmanager
def database(kind: str) -> Iterator[str]:
    if kind == "postgres":
        with fresh_database(ADMIN_URL, migrate=True) as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield f"sqlite:///{tmp}/bench.db"  # uvicorn's app factory migrates nothing: migrated below


@contextmanager
def slow_provider_server(database_url: str, latency: str) -> Iterator[tuple[str, dict[str, str]]]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = server_env(database_url, url)
    env["PYTHONPATH"] = f"{ROOT / 'src'}:{ROOT}"
    env[VARIABLE] = latency
    subprocess.run([sys.executable, "-m", "payorch", "migrate"], env=env, cwd=ROOT, check=True)
    command = [sys.executable, "-m", "uvicorn", "bench.provider_latency:slow_provider_app", "--factory"]
    command += ["--port", str(port), "--http", IMPORT_STRING, "--no-access-log", "--ws", "none"]
    with started_process(command, env, url + "/healthz", startup_seconds=300):  # a busy machine
        yield url, env


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--latency", default="120,380", help="the provider's p50,p99 in ms")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    with database(args.database) as url, slow_provider_server(url, args.latency) as (base, env):
        api_key, merchant = sandbox_application(env)
        samples = asyncio.run(measure(base, api_key, merchant, args.count, args.concurrency))
    print(f"provider latency p50,p99 {args.latency} ms; {args.database}; concurrency {args.concurrency}")
    for step in STEPS:
        figures: dict[str, float | str] = {}
        for column in ("provider", "added", "app", "db", "client"):
            shown = summary(samples[step][column], digits=1)
            figures[column] = f"{shown['p50_ms']}/{shown['p99_ms']}"
        report(f"{step} (ms, p50/p99)", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
