"""SANDBOX deliveries to internal addresses, judged after DNS resolution at every attempt:
link-local and metadata addresses never, loopback and private ones only while
PAYORCH_SANDBOX_WEBHOOKS_ALLOW_PRIVATE is on, and then without keeping the answer's excerpt."""

from __future__ import annotations

import httpx
import pytest

from payorch.runtime import Runtime
from payorch.worker.deliveries import WebhookDeliveries
from tests.conftest import Sandbox, new_application
from tests.webhooks.helpers import BASE, create_endpoint, create_intent, deliveries_of
from tests.webhooks.receiver import Receiver


@pytest.fixture
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    overrides: dict[str, object] = getattr(request, "param", {})
    return overrides


PRIVATE_ON = {"sandbox_webhooks_allow_private": True}
PRIVATE_OFF = {"sandbox_webhooks_allow_private": False}


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
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    deliveries: WebhookDeliveries,
    internal: str,
) -> None:
    # Created while the name is harmless; then it is re-pointed (DNS rebinding). The receiver
    # stays among the answers, first: a sender that tried the addresses would reach it.
    answers = {"hooks.test": [receiver.host]}

    async def resolver(host: str, port: int) -> list[str]:
        return answers[host]

    runtime.webhook_resolver = resolver
    endpoint_id, _ = await create_endpoint(
        client, sandbox, f"http://hooks.test:{receiver.port}/hook"
    )
    answers["hooks.test"] = [receiver.host, internal]
    delivery = await attempt_once(client, runtime, deliveries, sandbox, endpoint_id)
    assert delivery["error"] == "url_not_allowed"
    assert delivery["status"] == "PENDING" and delivery["response_status"] is None
    assert receiver.requests == []


@pytest.mark.parametrize("settings_overrides", [PRIVATE_OFF], indirect=True)
async def test_private_targets_are_refused_at_delivery_while_the_setting_is_off(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    deliveries: WebhookDeliveries,
) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return {"hooks.test": [receiver.host], "lan.test": ["192.168.1.20"]}[host]

    runtime.webhook_resolver = resolver
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
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    receiver: Receiver,
    deliveries: WebhookDeliveries,
    path: str,
    status: int,
) -> None:
    endpoint_id, _ = await create_endpoint(client, sandbox, receiver.url(path))
    delivery = await attempt_once(client, runtime, deliveries, sandbox, endpoint_id)
    assert len(receiver.requests) == 1
    assert delivery["response_status"] == status
    assert delivery["status"] == ("SUCCEEDED" if status == 200 else "PENDING")
    assert delivery["response_excerpt"] is None
    detail = await client.get(
        f"{BASE}/{endpoint_id}/deliveries/{delivery['id']}", headers=sandbox.headers
    )
    [attempt] = detail.json()["attempt_history"]
    assert attempt["response_status"] == status and attempt["response_excerpt"] is None


@pytest.mark.parametrize("settings_overrides", [PRIVATE_ON], indirect=True)
async def test_production_never_reaches_the_metadata_address_either(
    client: httpx.AsyncClient, runtime: Runtime, deliveries: WebhookDeliveries
) -> None:
    answers = {"hooks.example": ["93.184.216.34"]}

    async def resolver(host: str, port: int) -> list[str]:
        return answers[host]

    runtime.webhook_resolver = resolver
    app = await new_application(runtime, "PRODUCTION")
    endpoint_id, _ = await create_endpoint(client, app, "https://hooks.example/h")
    answers["hooks.example"] = ["169.254.169.254"]
    delivery = await attempt_once(client, runtime, deliveries, app, endpoint_id)
    assert delivery["error"] == "url_not_allowed" and delivery["response_status"] is None
