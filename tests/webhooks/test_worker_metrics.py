"""`payorch worker` with PAYORCH_WORKER_METRICS_PORT: a real worker process serves its own
/metrics, and the delivery it makes is counted there; SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.kit import TEST_SECRET_KEY, Sandbox
from tests.live import free_port
from tests.observability.scrape import parse, value
from tests.webhooks.helpers import create_endpoint, create_intent
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[2] / "src"


def worker_env(database_url: str, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
        "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on loopback
        **extra,
    }


async def test_the_worker_serves_its_metrics_on_the_configured_port(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    receiver: Receiver,
    database_url: str,
    tmp_path: Path,
) -> None:
    port = free_port()
    log = (tmp_path / "worker.log").open("wb")
    worker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "payorch",
        "worker",
        env=worker_env(database_url, PAYORCH_WORKER_METRICS_PORT=str(port)),
        stdout=log,
        stderr=log,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        async with httpx.AsyncClient(timeout=2) as scraper:
            deadline = time.monotonic() + 20
            while True:  # interpreter start-up
                try:
                    first = await scraper.get(url)
                    break
                except httpx.TransportError:
                    assert worker.returncode is None, (tmp_path / "worker.log").read_text()
                    assert time.monotonic() < deadline, "the worker never served its metrics"
                    await asyncio.sleep(0.1)
            assert first.status_code == 200
            assert first.headers["content-type"].startswith("text/plain; version=")
            assert "# TYPE payorch_webhook_delivery_attempts_total counter" in first.text
            start = value(parse(first.text), "payorch_webhook_delivery_attempts_total", outcome="succeeded")

            await create_endpoint(client, sandbox, receiver.url("/hook"))
            await create_intent(client, sandbox)
            await receiver.wait_for(1, timeout=10)  # delivered by the worker process
            deadline = time.monotonic() + 10
            while True:  # counted when the attempt ends, just after the receiver answered
                samples = parse((await scraper.get(url)).text)
                counted = value(samples, "payorch_webhook_delivery_attempts_total", outcome="succeeded")
                if counted >= start + 1 or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            assert counted >= start + 1
            # Settled once its jobs were built (payorch/heap.py): the start-up heap is frozen.
            assert value(samples, "payorch_gc_frozen_objects") > 10_000
        worker.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(worker.wait(), 20) == 0
    finally:
        if worker.returncode is None:
            worker.kill()
            await worker.wait()
        log.close()


def test_a_bad_port_stops_the_worker_with_one_line(database_url: str) -> None:
    for bad in ("not-a-port", "0", "70000"):
        done = subprocess.run(
            [sys.executable, "-m", "payorch", "worker"],
            env=worker_env(database_url, PAYORCH_WORKER_METRICS_PORT=bad),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("payorch: PAYORCH_WORKER_METRICS_PORT:"), done.stderr
