"""The events the background jobs write, against the event catalogue (tests/events/helpers.py),
on SQLite and PostgreSQL: payment.expired by the expiry job, reconciliation.discrepancy with and
without a known intent by a reconciliation run, webhook_endpoint.disabled by the delivery job."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from payorch.checkouts.expiry_job import ExpireCheckouts
from payorch.clock import FrozenClock
from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.databases import own_database
from tests.events.helpers import checked_events
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import A, B, read, start
from tests.reconciliation.helpers import made, paid, reconcile
from tests.webhooks.helpers import AUTO_DISABLE, HOUR, create_endpoint, create_intent
from tests.webhooks.receiver import Receiver, serve_receiver

database_url = own_database  # the jobs sweep the database: this module gets its own
pytestmark = pytest.mark.settings(**AUTO_DISABLE)  # as tests/webhooks/test_auto_disable.py


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    async with serve_receiver() as server:
        yield server


def _types(events: list[dict[str, object]]) -> set[object]:
    return {event["type"] for event in events}


async def test_an_expired_checkout(client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, _ = await start(client, sandbox, A)
    clock.advance(301)  # A's token lives 5 minutes: the checkout's expires_at
    while await ExpireCheckouts().run_once(runtime):
        pass
    assert (await read(client, sandbox, intent["id"]))["status"] == "EXPIRED"
    assert "payment.expired" in _types(await checked_events(client, sandbox))


async def test_discrepancies_with_and_without_an_intent(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await paid(client, sandbox, A, 3000)
    await made(
        client, sandbox, provider=A, kind="refunded_at_provider", payment_intent_id=intent["id"], amount=1000
    )
    await made(client, sandbox, provider=B, kind="orphan", amount=4200, currency="CLP")
    assert len((await reconcile(client, sandbox, runtime))["findings"]) == 2
    found = [e for e in await checked_events(client, sandbox) if e["type"] == "reconciliation.discrepancy"]
    assert sorted("payment_intent_id" in e["data"] for e in found) == [False, True]


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_an_endpoint_disabled_for_failing(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime, clock: FrozenClock, receiver: Receiver
) -> None:
    deliveries = WebhookDeliveries()
    await create_endpoint(client, sandbox, receiver.url("/status/500"))
    await create_endpoint(client, sandbox, receiver.url("/other"), ["webhook_endpoint.disabled"])
    try:
        for n in range(8):  # a new event every 4 hours, each failing: disabled past 24 h
            await create_intent(client, sandbox, f"order-{n}")
            for _ in range(4):
                await deliveries.run_until_idle(runtime)
                clock.advance(HOUR)
    finally:
        await deliveries.drain()
    assert "webhook_endpoint.disabled" in _types(await checked_events(client, sandbox))
