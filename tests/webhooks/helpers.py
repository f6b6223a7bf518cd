"""Small HTTP helpers shared by the webhook tests."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import httpx

from tests.conftest import Sandbox

BASE = "/v1/admin/webhook-endpoints"

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
    body: dict[str, Any] = {"url": url}
    if events is not None:
        body["events"] = events
    response = await client.post(BASE, json=body, headers=app.headers)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    CREATED.append(data["id"])
    return data["id"], data["secret"]


async def create_intent(client: httpx.AsyncClient, app: Sandbox, reference: str = "order-1") -> str:
    body = {
        "merchant_account_id": app.merchant_account_id,
        "external_reference": reference,
        "amount": 1500,
        "currency": "CLP",
        "return_url": "https://shop.example/return",
    }
    response = await client.post("/v1/payment-intents", json=body, headers=app.headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


async def deliveries_of(
    client: httpx.AsyncClient, app: Sandbox, endpoint_id: str
) -> list[dict[str, Any]]:
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
