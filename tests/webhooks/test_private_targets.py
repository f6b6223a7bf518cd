"""SANDBOX deliveries to internal addresses, judged after DNS resolution at every attempt:
link-local and metadata addresses never, loopback and private ones only while
PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE is on, and then without keeping the answer's excerpt."""

from __future__ import annotations

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.webhooks.delivery_engine import WebhookDeliveries
from tests.kit import Sandbox
from tests.webhooks.helpers import (
    BASE,
    PRIVATE_OFF,
    PRIVATE_ON,
    FakeDns,
    Hooks,
    create_endpoint,
    create_intent,
    deliveries_of,
    resolve_from,
)


async def attempt_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    deliveries: WebhookDeliveries,
    app: Sandbox,
    endpoint_id: str,
) -> dict[str, object]:
    await create_intent(client, app)
    assert await deliveries.run_until_idle(runtime) == 1
    [delivery] = await deliveries_of(client, app, endpoint_id)
    return delivery


@pytest.mark.parametrize("settings_overrides", [PRIVATE_ON, PRIVATE_OFF], indirect=True)
@pytest.mark.parametrize(
    "internal", ["169.254.169.254", "::ffff:169.254.169.254", "fe80::1", "64:ff9b::a9fe:a9fe"]
)
async def test_a_name_that_resolves_to_link_local_is_refused_at_delivery(
    dns: FakeDns, internal: str, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    # Created while the name is harmless; then it is re-pointed (DNS rebinding). The receiver
    # stays among the answers, first: a sender that tried the addresses would reach it.
    answers = {"hooks.test": [receiver.host]}
    resolve_from(dns, answers)
    endpoint_id, _ = await create_endpoint(client, sandbox, f"http://hooks.test:{receiver.port}/hook")
    answers["hooks.test"] = [receiver.host, internal]
    delivery = await attempt_once(client, runtime, deliveries, sandbox, endpoint_id)
    assert delivery["error"] == "url_not_allowed"
    assert delivery["status"] == "PENDING" and delivery["response_status"] is None
    assert receiver.requests == []


@pytest.mark.parametrize("settings_overrides", [PRIVATE_OFF], indirect=True)
async def test_private_targets_are_refused_at_delivery_while_the_setting_is_off(
    dns: FakeDns, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    resolve_from(dns, {"hooks.test": [receiver.host], "lan.test": ["192.168.1.20"]})
    loopback, _ = await create_endpoint(client, sandbox, f"http://hooks.test:{receiver.port}/h")
    lan, _ = await create_endpoint(client, sandbox, "http://lan.test:8080/h")
    await create_intent(client, sandbox)
    assert await deliveries.run_until_idle(runtime) == 2
    for endpoint_id in (loopback, lan):
        [delivery] = await deliveries_of(client, sandbox, endpoint_id)
        assert delivery["error"] == "url_not_allowed", delivery
        assert delivery["response_status"] is None
    assert receiver.requests == []
    # The address itself is refused at once (no endpoint is stored for it).
    response = await client.post(BASE, json={"url": receiver.url("/h")}, headers=sandbox.headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "WEBHOOK_ENDPOINT_URL_NOT_ALLOWED"


@pytest.mark.parametrize("settings_overrides", [PRIVATE_ON], indirect=True)
@pytest.mark.parametrize(("path", "status"), [("/ok", 200), ("/status/500", 500)])
async def test_a_loopback_receiver_is_reached_but_its_answer_is_not_stored(
    path: str, status: int, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url(path))
    delivery = await attempt_once(client, runtime, deliveries, sandbox, endpoint_id)
    assert len(receiver.requests) == 1
    assert delivery["response_status"] == status
    assert delivery["status"] == ("SUCCEEDED" if status == 200 else "PENDING")
    assert delivery["response_excerpt"] is None
    detail = await client.get(f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers)
    [attempt] = detail.json()["attempt_history"]
    assert attempt["response_status"] == status and attempt["response_excerpt"] is None


@pytest.mark.parametrize("settings_overrides", [PRIVATE_OFF], indirect=True)
async def test_a_name_that_does_not_resolve_fails_like_one_that_resolves_inside(
    dns: FakeDns, hooks: Hooks
) -> None:
    # One reason for both, on the delivery and its attempt: else names inside could be probed.
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    resolve_from(dns, {"lan.test": ["192.168.1.20"], "meta.test": ["169.254.169.254"]})
    endpoints = [
        (await create_endpoint(client, sandbox, f"http://{name}:8080/h"))[0]
        for name in ("lan.test", "meta.test", "nowhere.test")
    ]
    await create_intent(client, sandbox)
    assert await deliveries.run_until_idle(runtime) == 3
    seen = set()
    for endpoint_id in endpoints:
        [delivery] = await deliveries_of(client, sandbox, endpoint_id)
        detail = await client.get(
            f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers
        )
        [attempt] = detail.json()["attempt_history"]
        for record in (delivery, attempt):
            seen.add((record["error"], record["failure_reason"], record["failure_message"]))
    assert seen == {
        (
            "url_not_allowed",
            "url_not_allowed",
            "the URL is not allowed: the URL's host is not allowed or does not resolve to an allowed address",
        )
    }
