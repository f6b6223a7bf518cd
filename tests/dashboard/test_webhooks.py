"""Webhook pages over plain HTTP, with real deliveries to a local receiver (SQLite, PostgreSQL):
endpoint create (secret once), edit, disable, enable, delete; deliveries with filters; a
delivery's attempts; retry."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.dashboard.signing import sign_in
from tests.databases import own_database
from tests.kit import Sandbox
from tests.webhooks.helpers import PRIVATE_ON, create_intent
from tests.webhooks.receiver import Receiver, serve_receiver

database_url = own_database  # the delivery job sweeps the database: this module gets its own
ENDPOINT_LINK = re.compile(r'href="/dashboard/webhooks/(whe_[0-9a-z]+)"')
DELIVERY_LINK = re.compile(r'href="/dashboard/webhooks/deliveries/(whe_[0-9a-z]+)/(whd_[0-9a-z]+)"')


pytestmark = pytest.mark.settings(**PRIVATE_ON)  # the receiver listens on 127.0.0.1


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


async def test_endpoint_life_and_a_failed_delivery_retried(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, receiver: Receiver
) -> None:
    csrf = await sign_in(client, sandbox)
    assert "No endpoint yet" in (await client.get("/dashboard/webhooks")).text
    refused = await client.post("/dashboard/webhooks", data={"url": receiver.url("/status/500")})
    assert refused.status_code == 403  # no CSRF token
    bad = await client.post("/dashboard/webhooks", data={"csrf": csrf, "url": "ftp://x"})
    assert bad.status_code == 400 and "url" in bad.text.lower()
    created = await client.post(
        "/dashboard/webhooks",
        data={"csrf": csrf, "url": receiver.url("/status/500"), "events": "payment_intent.created"},
    )
    assert created.status_code == 200, created.text
    secret = re.search(r'<code id="secret">([0-9a-f]{64})</code>', created.text)
    assert secret and "shown only once" in created.text and 'data-copy="secret"' in created.text
    [endpoint_id] = ENDPOINT_LINK.findall(created.text)
    page = await client.get(f"/dashboard/webhooks/{endpoint_id}")
    assert secret.group(1) not in page.text and "payment_intent.created" in page.text

    intent_id = await create_intent(client, sandbox)
    jobs = WebhookDeliveries()
    try:
        assert await jobs.run_until_idle(runtime) == 1
        listed = await client.get("/dashboard/webhooks/deliveries", params={"status": "PENDING"})
        [(_, delivery_id)] = DELIVERY_LINK.findall(listed.text)
        assert "HTTP 500" in listed.text
        none = await client.get("/dashboard/webhooks/deliveries", params={"status": "SUCCEEDED"})
        assert DELIVERY_LINK.findall(none.text) == []
        delivery_url = f"/dashboard/webhooks/deliveries/{endpoint_id}/{delivery_id}"
        attempts = await client.get(delivery_url)
        assert "<td>500</td>" in attempts.text and " ms</td>" in attempts.text
        assert "unexpected_status" in attempts.text  # the attempt's error

        recover_url = f"/dashboard/webhooks/{endpoint_id}/recover"
        assert (await client.post(recover_url, data={"since": "2000-01-01"})).status_code == 403
        bad = await client.post(recover_url, data={"csrf": csrf, "since": "last week"})
        assert bad.status_code == 400 and "since" in bad.text
        counted = []
        for failing in ("", "on", "on"):  # exhausted only: none; with the failing one: it, once
            answer = await client.post(
                recover_url, data={"csrf": csrf, "since": "2000-01-01", "include_failing": failing}
            )
            assert answer.status_code == 303, answer.text
            counted.append(answer.headers["location"].rsplit("recovered=", 1)[1])
            assert (
                f"{counted[-1]} failed deliveries recovered"
                in (await client.get(answer.headers["location"])).text
            )
        assert counted == ["0", "1", "0"]

        edited = await client.post(
            f"/dashboard/webhooks/{endpoint_id}",
            data={"csrf": csrf, "url": receiver.url("/hook"), "events": "payment_intent.created"},
        )
        assert edited.headers["location"].endswith("?notice=saved")
        retried = await client.post(delivery_url + "/retry", data={"csrf": csrf})
        assert retried.headers["location"] == delivery_url + "?notice=retried"
        assert await jobs.run_until_idle(runtime) == 1
    finally:
        await jobs.drain()
    assert len(receiver.at("/hook")) == 1
    done = await client.get(delivery_url)
    assert "status-SUCCEEDED" in done.text and "Retry now" not in done.text
    intent_page = await client.get(f"/dashboard/payments/{intent_id}")
    assert delivery_id in intent_page.text  # the intent's events show their deliveries

    for action, shown in (("disable", "disabled"), ("enable", "enabled")):
        answer = await client.post(
            f"/dashboard/webhooks/{endpoint_id}", data={"csrf": csrf, "action": action}
        )
        assert answer.status_code == 303
        assert f"<dd>{shown}</dd>" in (await client.get(answer.headers["location"])).text
    deleted = await client.post(f"/dashboard/webhooks/{endpoint_id}/delete", data={"csrf": csrf})
    assert deleted.headers["location"] == "/dashboard/webhooks"
    assert (await client.get(f"/dashboard/webhooks/{endpoint_id}")).status_code == 404
