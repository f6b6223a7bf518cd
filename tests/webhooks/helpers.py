"""Small HTTP helpers shared by the webhook tests."""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import hmac
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import func, insert, select, update

from payorch.clock import FrozenClock
from payorch.db.tables.webhooks import webhook_deliveries, webhook_endpoints
from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests import kit
from tests.kit import TEST_SECRET_KEY, Sandbox
from tests.webhooks.receiver import Receiver

BASE = "/v1/admin/webhook-endpoints"
HOUR = 3600
# Automatic disabling in one day of hourly retries: disabled after a day of failures with at
# least 4 failed attempts (tests/webhooks/test_auto_disable.py, tests/events).
AUTO_DISABLE: dict[str, object] = {
    "webhook_retry_schedule": ",".join([str(HOUR)] * 6),
    "webhook_timeout_seconds": 5.0,
    "webhook_disable_after_seconds": 24 * HOUR,
    "webhook_disable_after_attempts": 4,
}

# PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE for a test, through conftest's settings_overrides:
# @pytest.mark.parametrize("settings_overrides", [PRIVATE_OFF], indirect=True)
PRIVATE_ON: dict[str, object] = {"sandbox_webhooks_allow_private": True}
PRIVATE_OFF: dict[str, object] = {"sandbox_webhooks_allow_private": False}
PRIVATE_UNSET: dict[str, object] = {"sandbox_webhooks_allow_private": None}  # database default


def resolve_from(dns: FakeDns, answers: dict[str, list[str]]) -> None:
    """Resolve webhook host names from ``answers``; a test re-points a name by changing it."""
    dns.answers = answers


# Endpoints created by the running test; conftest deletes them (and so their deliveries) after
# it, so a later test's worker never picks up an earlier test's pending deliveries.
CREATED: list[str] = []


async def create_endpoint(
    client: httpx.AsyncClient, app: Sandbox, url: str, events: list[str] | None = None
) -> tuple[str, str]:
    """tests/kit.py's create_endpoint, remembered for conftest to delete after the test."""
    endpoint = await kit.create_endpoint(client, app, url, events)
    CREATED.append(endpoint.id)
    return endpoint.id, endpoint.secret


async def create_intent(client: httpx.AsyncClient, app: Sandbox, reference: str = "order-1") -> str:
    return str((await kit.create_intent(client, app, external_reference=reference))["id"])


@dataclass(frozen=True)
class Hooks:
    """A webhook test's set-up (conftest's ``hooks``): the API, the application, the runtime,
    the frozen clock, a local receiver and the delivery job the test drives."""

    client: httpx.AsyncClient
    sandbox: Sandbox
    runtime: Runtime
    clock: FrozenClock
    receiver: Receiver
    deliveries: WebhookDeliveries

    def parts(
        self,
    ) -> tuple[httpx.AsyncClient, Sandbox, Runtime, FrozenClock, Receiver, WebhookDeliveries]:
        return self.client, self.sandbox, self.runtime, self.clock, self.receiver, self.deliveries

    async def queued(self, path: str = "/hook", reference: str = "order-1") -> tuple[str, str]:
        """An endpoint at the receiver's ``path``, then an intent: its payment_intent.created is
        queued for the endpoint. Returns (endpoint id, intent id)."""
        endpoint_id, _ = await create_endpoint(self.client, self.sandbox, self.receiver.url(path))
        return endpoint_id, await create_intent(self.client, self.sandbox, reference)

    async def delivered(self, path: str = "/hook", reference: str = "order-1") -> tuple[str, str]:
        """``queued``, then the delivery job run until idle (its count not checked)."""
        queued = await self.queued(path, reference)
        await self.deliveries.run_until_idle(self.runtime)
        return queued


async def deliveries_of(client: httpx.AsyncClient, app: Sandbox, endpoint_id: str) -> list[dict[str, Any]]:
    response = await client.get(
        f"{BASE}/{endpoint_id}/deliveries", params={"limit": 100}, headers=app.headers
    )
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def independent_signature_ok(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """The receiver's check, written from docs/webhooks.md alone (not from payorch's signing module)."""
    timestamp = headers["x-pay-timestamp"]
    expected = hmac.new(
        secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256
    ).hexdigest()
    given = headers["x-pay-signature"]
    return given.startswith("v1=") and hmac.compare_digest(given[3:], expected)


class FakeDns:
    """A webhook resolver for tests: answers from ``answers`` (other names do not resolve),
    records every lookup."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.answers:
            raise OSError("name does not resolve")
        return self.answers[host]


def self_signed(name: str, directory: Path) -> tuple[str, str, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    certfile, keyfile = directory / f"{name}.crt", directory / f"{name}.key"
    certfile.write_bytes(pem)
    keyfile.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(certfile), str(keyfile), pem


async def backlog(
    client: httpx.AsyncClient, runtime: Runtime, app: Sandbox, endpoint_id: str, count: int
) -> None:
    """``count`` due deliveries for the endpoint: one through an intent, the rest copies of it
    inserted with SQL (what a backlog looks like to the claim)."""
    await create_intent(client, app, "backlog")
    [first] = await deliveries_of(client, app, endpoint_id)
    now = runtime.clock.now()
    rows = [
        {
            "id": f"whd_backlog{n:08d}",
            "application_id": app.application_id,
            "endpoint_id": endpoint_id,
            "event_id": first["event_id"],
            "event_type": first["event_type"],
            "status": "PENDING",
            "attempts": 0,
            "schedule_attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
            "updated_at": now,
        }
        for n in range(count - 1)
    ]
    async with runtime.database.transaction() as conn:
        await conn.execute(insert(webhook_deliveries), rows)


async def probed_endpoint(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, url: str, deliveries: int = 5
) -> str:
    """An endpoint whose breaker's hold just ended (its next claim is a probe), with a backlog
    of ``deliveries`` due."""
    endpoint_id, _ = await create_endpoint(client, sandbox, url)
    await backlog(client, runtime, sandbox, endpoint_id, deliveries)
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        await conn.execute(
            update(webhook_endpoints)
            .where(webhook_endpoints.c.id == endpoint_id)
            .values(
                failing_since=now - datetime.timedelta(hours=1),
                failed_attempts=100,
                breaker_until=now - datetime.timedelta(seconds=1),
            )
        )
    return endpoint_id


async def start_worker(
    database_url: str, log: Path, settings: dict[str, str] | None = None
) -> asyncio.subprocess.Process:
    """A `payorch worker` process; ``settings``: more PAYORCH_* environment variables."""
    env = {
        **os.environ,
        **(settings or {}),  # the test's own settings over whatever the environment has
        "PYTHONPATH": str(SRC),
        "PAYORCH_DATABASE_URL": database_url,
        "PAYORCH_SECRET_KEY": TEST_SECRET_KEY,
        "PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE": "true",  # the receiver is on loopback
        "PAYORCH_WEBHOOK_TIMEOUT_SECONDS": str(TIMEOUT_SECONDS),
    }
    handle = log.open("wb")
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "payorch", "worker", env=env, stdout=handle, stderr=handle
    )


async def wait_started(log: Path, seconds: float = 60) -> None:
    """Interpreter start-up is slow on a loaded machine: wait for the worker's own word."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if log.exists() and b"worker started" in log.read_bytes():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"worker did not start: {log.read_bytes()[-2000:]!r}")


async def counts(runtime: Runtime, application_id: str) -> dict[str, int]:
    async with runtime.database.transaction() as conn:
        rows = await conn.execute(
            select(webhook_deliveries.c.status, func.count())
            .where(webhook_deliveries.c.application_id == application_id)
            .group_by(webhook_deliveries.c.status)
        )
        return {status: n for status, n in rows.all()}


SRC = Path(__file__).resolve().parents[2] / "src"


TIMEOUT_SECONDS = 2  # lease = timeout + 10 s margin
