"""A MOCK provider call reaches the simulator in process without passing through the service's
edge a second time: no request line, no HTTP metric, no rate-limit count of its own; the client
request that led to it pays for them once. SQLite and PostgreSQL."""

from __future__ import annotations

import httpx

from payorch.runtime import Runtime
from tests.observability.capture import Capture, lines_of, logs
from tests.observability.scrape import scrape, value
from tests.providers.helpers import A, checkout, create_intent, mock_sandbox

__all__ = ["logs"]  # the fixture

REQUESTS = "payorch.requests"
HTTP = "payorch_http_requests_total"
CHECKOUT_ROUTE = "/v1/payment-intents/{payment_intent_id}/checkout"
SIMULATOR_CREATE = "/simulator/provider_a/rswebpaytransaction/api/webpay/v1.2/transactions"


async def test_a_mock_provider_call_does_not_pass_through_the_edge_again(
    client: httpx.AsyncClient, runtime: Runtime, logs: Capture
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    before = await scrape(client)
    response = await checkout(client, sandbox, intent["id"], provider=A)
    assert response.status_code == 200, response.text
    assert response.json()["provider"] == A  # the simulator was called, in process
    assert "ratelimit-limit" in response.headers  # the client request was limited, once
    after = await scrape(client)

    routes = [str(line["route"]) for line in lines_of(logs, REQUESTS)]
    assert routes.count(CHECKOUT_ROUTE) == 1
    assert [route for route in routes if route.startswith("/simulator/")] == []
    checkout_count = value(after, HTTP, method="POST", route=CHECKOUT_ROUTE, status="200")
    assert checkout_count - value(before, HTTP, method="POST", route=CHECKOUT_ROUTE, status="200") == 1
    simulator = {
        labels: count - before.get((name, labels), 0.0)
        for (name, labels), count in after.items()
        if name == HTTP and any(v.startswith("/simulator/") for _, v in labels)
    }
    assert all(delta == 0 for delta in simulator.values()), simulator


async def test_the_simulator_is_still_served_at_the_edge_to_a_browser(
    client: httpx.AsyncClient, runtime: Runtime, logs: Capture
) -> None:
    """What the buyer's browser asks of the simulator is a request like any other."""
    sandbox = await mock_sandbox(runtime)
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"], provider=A)
    page = await client.post(response.json()["checkout"]["url"], data=response.json()["checkout"]["fields"])
    assert page.status_code == 200, page.text
    assert "x-request-id" in page.headers
    routes = [str(line["route"]) for line in lines_of(logs, REQUESTS)]
    assert [route for route in routes if route.startswith("/simulator/provider_a")] != []
