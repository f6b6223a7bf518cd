"""The deployment of docs/deployment.md on one machine: two `payorch serve --no-worker` API
processes and two `payorch worker` processes on one PostgreSQL, driven through the client.

Payments are created on one API process and paid, read and refunded through the other; the
workers deliver the signed webhooks to a local receiver, which verifies them with
payorch.client.webhooks.verify. Skips until the endpoints of the other branches exist.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from payorch.client import PayorchClient, ProviderError
from payorch.providers.registry import PROVIDER_IDS
from tests.client.buyer import pay
from tests.client.signed_receiver import wait_for_events, webhook_receiver
from tests.databases import create_postgres_database, drop_postgres_database
from tests.kit import TEST_SECRET_KEY
from tests.live import START_SECONDS, free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PAYMENTS = 4


def _run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "-m", "payorch", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _wait_ready(url: str, process: subprocess.Popen[bytes], deadline: float) -> None:
    while True:
        assert process.poll() is None, f"{url} exited with {process.returncode}"
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"{url} did not become ready"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.postgres
def test_two_api_processes_and_two_workers_on_one_postgresql(tmp_path: Path) -> None:
    database_url, admin = asyncio.run(create_postgres_database())
    ports = [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
        "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on loopback
        "PAYORCH_PUBLIC_URL": urls[0],  # what a load balancer's address would be
    }
    processes: list[subprocess.Popen[bytes]] = []
    logs = [open(tmp_path / f"process-{n}.log", "wb") for n in range(4)]  # noqa: SIM115
    try:
        _run(env, "migrate")
        app = json.loads(
            _run(
                env,
                "applications",
                "create",
                "--name",
                "shop",
                "--environment",
                "SANDBOX",
                "--mock-connectors",
                "--json",
            )
        )
        for n, port in enumerate(ports):
            processes.append(
                subprocess.Popen(  # noqa: S603
                    [sys.executable, "-m", "payorch", "serve", "--no-worker", "--port", str(port)],
                    env=env,
                    stdout=logs[n],
                    stderr=logs[n],
                )
            )
        for n in (2, 3):
            processes.append(
                subprocess.Popen(  # noqa: S603
                    [sys.executable, "-m", "payorch", "worker"],
                    env=env,
                    stdout=logs[n],
                    stderr=logs[n],
                )
            )
        deadline = time.monotonic() + START_SECONDS
        for url, process in zip(urls, processes, strict=False):
            _wait_ready(url, process, deadline)

        clients = [PayorchClient(app["api_key"], url) for url in urls]
        with webhook_receiver() as (host, receiver):
            endpoint = clients[1].create_webhook_endpoint(url=f"http://{host}:8080/hooks")
            assert endpoint.secret is not None
            receiver.secret = endpoint.secret.get_secret_value()

            intents = []
            for n in range(PAYMENTS):
                first, second = clients[n % 2], clients[(n + 1) % 2]
                intent = first.create_payment_intent(
                    merchant_account_id=app["merchant_account_id"],
                    external_reference=f"order-{n}",
                    amount=1000 + n,
                    currency="CLP",
                    return_url="https://shop.example/return",
                )
                provider = PROVIDER_IDS[n % len(PROVIDER_IDS)]  # each registered one in turn
                checkout = second.create_checkout(intent.id, provider=provider)
                returned = pay(checkout, "approve")
                assert returned["payment_intent_id"] == [intent.id]
                read = first.get_payment_intent(intent.id)
                assert read.status == "AUTHORIZED" and read.payment is not None, read
                intents.append(read)

            refunded = intents[0]
            assert refunded.payment is not None
            try:
                refund = clients[1].create_refund(refunded.payment.id, amount=400)
            except ProviderError as error:
                pytest.fail(f"refund through the second API process: {error} {error.details}")
            assert refund.status in ("SUCCEEDED", "PENDING")
            payment = clients[0].get_payment(refunded.payment.id)
            assert payment.refunded_amount in (0, 400)

            # Every authorization and the refund arrive, signed, at least once.
            wanted = {(i.id, "payment.authorized") for i in intents}
            wanted.add((refunded.id, "refund.succeeded"))
            wait_for_events(receiver, wanted)
            assert receiver.rejected == 0

        # Both API processes served requests, each counting its own in /metrics.
        for url in urls:
            text = httpx.get(f"{url}/metrics", timeout=5).text
            assert 'route="/v1/payment-intents"' in text or 'route="/v1/payment-intents/{' in text
        for client in clients:
            client.close()

        # The processes' real logs: JSON lines, request ids on request lines, no secret.
        for log in logs:
            log.flush()
        text = "".join((tmp_path / f"process-{n}.log").read_text() for n in range(4))
        secret = receiver.secret
        assert app["api_key"] not in text and app["api_key"].rsplit("_", 1)[1] not in text
        assert secret not in text
        lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        assert lines and all(line["request_id"] for line in lines)
        assert any(line["request_id"].startswith("req_") for line in lines)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs:
            log.close()
        asyncio.run(drop_postgres_database(database_url, admin))
