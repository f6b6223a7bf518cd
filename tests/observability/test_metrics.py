"""/metrics through HTTP: request metrics by route template and status, and the domain metrics."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from payorch.observability import metrics
from payorch.runtime import Runtime
from tests.kit import Sandbox, create_intent, mock_sandbox
from tests.providers.helpers import B, start

ROUTE = "/v1/payment-intents/{payment_intent_id}"
CHECKOUT = "/v1/payment-intents/{payment_intent_id}/checkout"
PREFERENCES = "/simulator/provider_b/checkout/preferences"


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_requests_are_counted_by_route_template_and_status(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    ok = {"method": "GET", "route": ROUTE, "status": "200"}
    missing = {"method": "GET", "route": ROUTE, "status": "404"}
    before = (
        sample("payorch_http_requests_total", **ok),
        sample("payorch_http_requests_total", **missing),
        sample("payorch_http_request_duration_seconds_count", **ok),
    )
    ids = []
    for reference in ("order-a", "order-b"):
        ids.append((await create_intent(client, sandbox, external_reference=reference))["id"])
    for intent_id in ids:
        assert (await client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers)).is_success
    await client.get("/v1/payment-intents/payi_unknown", headers=sandbox.headers)

    assert sample("payorch_http_requests_total", **ok) == before[0] + 2
    assert sample("payorch_http_requests_total", **missing) == before[1] + 1
    assert sample("payorch_http_request_duration_seconds_count", **ok) == before[2] + 2
    text = (await client.get("/metrics")).text
    assert ids[0] not in text and "payi_unknown" not in text  # never the raw path
    assert f'route="{ROUTE}"' in text


async def test_unmatched_paths_share_one_label_and_rejections_are_counted(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    unmatched = {"method": "GET", "route": "<unmatched>", "status": "404"}
    before = sample("payorch_http_requests_total", **unmatched)
    for n in range(3):
        assert (await client.get(f"/no/such/path/{n}")).status_code == 404
    assert sample("payorch_http_requests_total", **unmatched) == before + 3

    # 415 is answered by the outer request middleware, before routing.
    rejected = {"method": "POST", "route": "<unmatched>", "status": "415"}
    before = sample("payorch_http_requests_total", **rejected)
    response = await client.post(
        "/v1/payment-intents",
        content=b"a=b",
        headers={**sandbox.headers, "content-type": "text/plain"},
    )
    assert response.status_code == 415
    assert sample("payorch_http_requests_total", **rejected) == before + 1


async def test_metrics_is_prometheus_text_with_every_domain_metric(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    for name, kind in (
        ("payorch_http_requests_total", "counter"),
        ("payorch_http_request_duration_seconds", "histogram"),
        ("payorch_provider_call_duration_seconds", "histogram"),
        ("payorch_provider_call_errors_total", "counter"),
        ("payorch_provider_health_state", "gauge"),
        ("payorch_webhook_delivery_attempts_total", "counter"),
        ("payorch_webhook_delivery_backlog_age_seconds", "gauge"),
        ("payorch_webhook_delivery_backlog", "gauge"),
    ):
        assert f"# TYPE {name} {kind}\n" in response.text


async def test_provider_call_times_calls_and_counts_failures_by_kind() -> None:
    provider, op = "provider_test", "create_checkout"
    before = sample("payorch_provider_call_duration_seconds_count", provider=provider, operation=op)

    with metrics.provider_call(provider, op):
        pass
    with metrics.provider_call(provider, op) as call:
        call.fail("http_5xx")
    with pytest.raises(httpx.ReadTimeout), metrics.provider_call(provider, op):
        raise httpx.ReadTimeout("slow")
    with pytest.raises(httpx.ConnectError), metrics.provider_call(provider, op):
        raise httpx.ConnectError("refused")
    with pytest.raises(ValueError), metrics.provider_call(provider, op):
        raise ValueError("nonsense")

    metrics.observe_provider_call(provider, op, 0.25, "http_4xx")
    metrics.observe_provider_call(provider, op, 0.01)

    after = sample("payorch_provider_call_duration_seconds_count", provider=provider, operation=op)
    assert after == before + 7
    for kind in ("http_5xx", "timeout", "network", "error", "http_4xx"):
        labels = {"provider": provider, "operation": op, "kind": kind}
        assert sample("payorch_provider_call_errors_total", **labels) >= 1


async def test_health_attempts_and_backlog_reach_the_scrape(client: httpx.AsyncClient) -> None:
    metrics.set_provider_health("provider_health_test", metrics.HealthState.SKIPPED)
    before = sample("payorch_webhook_delivery_attempts_total", outcome="timeout")
    metrics.record_delivery_attempt("timeout")
    metrics.record_delivery_attempt("bogus")  # counted as network_error, never raises

    calls: list[Any] = []

    async def backlog(runtime: Any) -> None:
        calls.append(runtime)
        metrics.set_delivery_backlog(42.5, 7)

    async def broken(runtime: Any) -> None:
        raise RuntimeError("database down")

    async def slow(runtime: Any) -> None:
        await asyncio.sleep(60)

    metrics.on_scrape(broken)
    metrics.on_scrape(slow)
    metrics.on_scrape(backlog)
    old_timeout = metrics.SCRAPE_HOOK_TIMEOUT_SECONDS
    metrics.SCRAPE_HOOK_TIMEOUT_SECONDS = 0.05
    try:
        response = await client.get("/metrics")
    finally:
        metrics.SCRAPE_HOOK_TIMEOUT_SECONDS = old_timeout
        for hook in (broken, slow, backlog):
            metrics._scrape_hooks.remove(hook)
    assert response.status_code == 200 and len(calls) == 1
    assert 'payorch_provider_health_state{provider="provider_health_test"} 1.0' in response.text
    assert "payorch_webhook_delivery_backlog_age_seconds 42.5" in response.text
    assert "payorch_webhook_delivery_backlog 7.0" in response.text
    assert sample("payorch_webhook_delivery_attempts_total", outcome="timeout") == before + 1


def test_the_worker_exporter_serves_this_process_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    from payorch.observability.exporter import PORT_VARIABLE, start_worker_exporter
    from tests.live import free_port

    monkeypatch.delenv(PORT_VARIABLE, raising=False)
    assert start_worker_exporter() is None
    monkeypatch.setenv(PORT_VARIABLE, "not-a-port")
    with pytest.raises(ValueError, match=PORT_VARIABLE):
        start_worker_exporter()
    port = free_port()
    monkeypatch.setenv(PORT_VARIABLE, str(port))
    assert start_worker_exporter(host="127.0.0.1") == port
    metrics.record_delivery_attempt("succeeded")
    text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
    assert 'payorch_webhook_delivery_attempts_total{outcome="succeeded"}' in text


async def test_a_mock_provider_call_does_not_pass_the_edge_again(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    # The checkout calls the simulator in process (create a preference): the client's request
    # is counted, the in-process call is not (it goes to the in-process app, no edge middleware).
    sandbox = await mock_sandbox(runtime)
    checkout = {"method": "POST", "route": CHECKOUT, "status": "200"}
    preference = {"method": "POST", "route": PREFERENCES, "status": "201"}
    # (The registry is the process's: other tests' requests are counted in it too.)
    before = [sample("payorch_http_requests_total", **labels) for labels in (checkout, preference)]
    intent, answer = await start(client, sandbox, B)
    assert answer["checkout"]["url"].startswith(runtime.settings.public_url)  # the simulator's
    assert sample("payorch_http_requests_total", **checkout) == before[0] + 1
    assert sample("payorch_http_requests_total", **preference) == before[1]
    # Only the simulator and the provider notifications answer in process: not the API.
    inside = await runtime.http.get(f"{runtime.settings.public_url}/v1/payment-intents/{intent['id']}")
    assert inside.status_code == 404
    assert inside.json()["error"]["code"] == "RESOURCE_NOT_FOUND"
