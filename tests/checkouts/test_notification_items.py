"""A notification of several items, through HTTP on SQLite and PostgreSQL (checkouts/returns.py):
every item acts, not the first only. Provider D's standard notifications carry a list of items,
each signed on its own: one body saying two checkouts were paid authorizes both intents; the
same body sent again moves nothing twice."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson

from payorch.providers.provider_d import PROVIDER_D, wire
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime
from tests.checkouts.helpers import authorized_events, connector_id
from tests.kit import mock_sandbox
from tests.providers.helpers import events_of, read, start


async def _paid_item(
    client: httpx.AsyncClient, credentials: dict[str, str], intent: dict[str, Any], body: dict[str, Any], psp: str
) -> dict[str, Any]:
    """A signed AUTHORISATION naming the checkout's session (its reference as the provider keeps it)."""
    session_id = urlsplit(body["checkout"]["url"]).path.rstrip("/").rsplit("/", 1)[-1]
    name = registration_of(PROVIDER_D).simulator_name
    books = await client.get(
        f"/simulator/{name}/customer-area/sessions/{session_id}", headers={"X-API-Key": credentials["api_key"]}
    )
    assert books.status_code == 200, books.text
    item: dict[str, Any] = {
        "amount": {"currency": intent["currency"], "value": intent["amount"]},
        "eventCode": "AUTHORISATION",
        "eventDate": "2026-12-05T10:00:00+00:00",
        "merchantAccountCode": credentials["merchant_account"],
        "merchantReference": books.json()["reference"],
        "pspReference": psp,
        "reason": "654321:1111:03/2030",
        "success": "true",
    }
    signature = wire.signature(wire.NotificationItem.model_validate(item), credentials["hmac_key"])
    return {**item, "additionalData": {"hmacSignature": signature}}


async def test_every_item_of_one_notification_acts(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    credentials = registration_of(PROVIDER_D).mock_credentials(runtime.cipher, sandbox.application_id)
    first, first_body = await start(client, sandbox, PROVIDER_D)
    second, second_body = await start(client, sandbox, PROVIDER_D)
    items = [
        await _paid_item(client, credentials, first, first_body, "PSPITEMS00000001"),
        await _paid_item(client, credentials, second, second_body, "PSPITEMS00000002"),
    ]
    body = orjson.dumps({"live": "false", "notificationItems": [{"NotificationRequestItem": i} for i in items]})
    url = f"/v1/provider-notifications/{PROVIDER_D}/{await connector_id(client, sandbox, PROVIDER_D)}"
    for _ in range(2):  # sent again (an answer lost): nothing moves twice
        answered = await client.post(url, content=body, headers={"Content-Type": "application/json"})
        assert answered.status_code == 200, answered.text
    for intent, code in ((first, "654321"), (second, "654321")):
        after = await read(client, sandbox, intent["id"])
        assert after["status"] == "AUTHORIZED", after
        assert after["payment"]["authorization_code"] == code
        assert authorized_events(await events_of(runtime, intent["id"])) == 1
