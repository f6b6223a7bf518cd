"""Delivery attempts by outcome on /metrics, through real deliveries to a local receiver:
succeeded, http_error, timeout, network_error, url_not_allowed, and exhausted once per
delivery whose last attempt failed; SQLite and PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.kit import new_application, refused_address
from tests.observability.scrape import Samples, scrape, value
from tests.webhooks.helpers import FakeDns, Hooks, create_endpoint, create_intent, deliveries_of

ATTEMPTS = "payorch_webhook_delivery_attempts_total"
OUTCOMES = ("succeeded", "http_error", "timeout", "network_error", "url_not_allowed", "exhausted")


pytestmark = pytest.mark.settings(webhook_retry_schedule="1,1,1,1,1,1", webhook_timeout_seconds=0.5)


def deltas(before: Samples, after: Samples) -> dict[str, float]:
    changed = {o: value(after, ATTEMPTS, outcome=o) - value(before, ATTEMPTS, outcome=o) for o in OUTCOMES}
    return {o: d for o, d in changed.items() if d}


@pytest.mark.parametrize(
    ("path", "outcome"),
    [
        ("/ok", "succeeded"),
        ("/status/404", "http_error"),
        ("/redirect", "http_error"),
        ("/sleep/2", "timeout"),  # longer than PAYORCH_WEBHOOK_TIMEOUT_SECONDS (0.5)
        (None, "network_error"),  # nobody listens
    ],
)
async def test_each_attempt_is_counted_by_outcome(path: str | None, outcome: str, hooks: Hooks) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    with refused_address(4400) as address:
        url = receiver.url(path) if path else f"http://{address}/nobody-listens"
        endpoint_id, _ = await create_endpoint(client, sandbox, url)
        await create_intent(client, sandbox)
        before = await scrape(client)
        assert await deliveries.run_until_idle(runtime) == 1
    assert deltas(before, await scrape(client)) == {outcome: 1}
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["attempts"] == 1


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_an_address_refused_at_delivery_time_is_url_not_allowed(
    client: httpx.AsyncClient, runtime: Runtime, dns: FakeDns
) -> None:
    answers = dns.answers
    answers["hooks.example"] = ["93.184.216.34"]
    app = await new_application(runtime, "PRODUCTION")
    await create_endpoint(client, app, "https://hooks.example/h")
    answers["hooks.example"] = ["10.0.0.7"]  # now points inside the network: refused unsent
    await create_intent(client, app)
    job = WebhookDeliveries()
    before = await scrape(client)
    try:
        assert await job.run_until_idle(runtime) == 1
    finally:
        await job.drain()
    assert deltas(before, await scrape(client)) == {"url_not_allowed": 1}


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_exhausted_is_counted_once_when_the_last_attempt_fails(hooks: Hooks) -> None:
    client, sandbox, runtime, clock, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await hooks.queued("/status/500")
    before = await scrape(client)
    for attempt in range(1, 8):
        assert await deliveries.run_until_idle(runtime) == 1
        counted = deltas(before, await scrape(client))
        assert counted == {"http_error": attempt, **({"exhausted": 1} if attempt == 7 else {})}
        clock.advance(1)
    assert deltas(before, await scrape(client)) == {"http_error": 7, "exhausted": 1}
    # Much later, nothing more is attempted for this delivery. (Other tests' deliveries in the
    # shared database may fall due when the clock jumps, so judge this one, not the total.)
    clock.advance(10**6)
    await deliveries.run_until_idle(runtime)
    [delivery] = await deliveries_of(client, sandbox, endpoint_id)
    assert delivery["status"] == "EXHAUSTED" and delivery["attempts"] == 7
    assert len([r for r in receiver.requests if r.path == "/status/500"]) == 7
