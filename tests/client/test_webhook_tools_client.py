"""payorch.client's webhook tools: verify with several secrets (a rotation's overlap), and
send_webhook_test / rotate_webhook_secret / get_webhook_delivery against the app (SQLite and
PostgreSQL), the test notice delivered by the real engine and verified with either secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.app import create_app
from payorch.client import AsyncPayorchClient, WebhookVerificationError
from payorch.client.webhooks import standard_secret, verify
from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.databases import own_database
from tests.kit import Sandbox
from tests.webhooks.receiver import Receiver, serve_receiver

database_url = own_database  # the delivery job sweeps the database: this module gets its own

OLD, NEW, OTHER = "0a" * 32, "1b" * 32, "2c" * 32
NOW = 1_800_000_000
BODY = json.dumps({"id": "evt_r", "type": "payment.authorized", "data": {}}, separators=(",", ":")).encode()


def _hex(secret: str) -> str:
    return "v1=" + hmac.new(secret.encode(), f"{NOW}.".encode() + BODY, hashlib.sha256).hexdigest()


def _b64(secret: str) -> str:
    digest = hmac.new(secret.encode(), f"evt_r.{NOW}.".encode() + BODY, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def test_a_notice_signed_by_two_secrets_verifies_with_either_or_both() -> None:
    x_pay = {"X-Pay-Timestamp": str(NOW), "X-Pay-Signature": f"{_hex(NEW)},{_hex(OLD)}"}
    standard = {
        "webhook-id": "evt_r",
        "webhook-timestamp": str(NOW),
        "webhook-signature": f"{_b64(NEW)} {_b64(OLD)}",
    }
    for headers in (x_pay, standard):
        for secrets in (OLD, NEW, [NEW, OLD], [OTHER, OLD], (standard_secret(NEW),)):
            assert verify(BODY, headers, secrets, now=NOW).id == "evt_r"
        for wrong in (OTHER, [OTHER]):
            with pytest.raises(WebhookVerificationError):
                verify(BODY, headers, wrong, now=NOW)
        with pytest.raises(ValueError):
            verify(BODY, headers, [], now=NOW)
    # One signature (no rotation): a list holding that secret verifies, the other does not.
    single = {"X-Pay-Timestamp": str(NOW), "X-Pay-Signature": _hex(NEW)}
    assert verify(BODY, single, [OLD, NEW], now=NOW).id == "evt_r"
    with pytest.raises(WebhookVerificationError):
        verify(BODY, single, [OLD], now=NOW)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_the_client_sends_a_test_and_rotates_the_secret(
    runtime: Runtime, sandbox: Sandbox, clock: FrozenClock, receiver: Receiver
) -> None:
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    job = WebhookDeliveries()
    async with AsyncPayorchClient(sandbox.api_key, "http://testserver", transport=transport) as client:
        endpoint = await client.create_webhook_endpoint(url=receiver.url("/client"))
        assert endpoint.secret is not None
        old = endpoint.secret.get_secret_value()
        queued = await client.send_webhook_test(endpoint.id)
        assert queued.event_type == "webhook.test" and queued.status == "PENDING"
        rotated = await client.rotate_webhook_secret(endpoint.id, overlap_seconds=600)
        assert rotated.secret is not None and rotated.previous_secret_expires_at is not None
        new = rotated.secret.get_secret_value()
        assert new != old
        try:
            assert await job.run_until_idle(runtime) == 1
        finally:
            await job.drain()
        [notice] = receiver.requests
        now = clock.now().timestamp()
        for secrets in (old, new, [new, old]):  # signed when attempted: during the overlap
            event = verify(notice.body, notice.headers, secrets, now=now)
            assert event.type == "webhook.test" and event.test
        read = await client.get_webhook_delivery(endpoint.id, queued.id)
        assert read.status == "SUCCEEDED" and read.payload is not None
        assert read.payload.encode() == notice.body and read.payment_intent_id is None
        assert read.failure_reason is None
