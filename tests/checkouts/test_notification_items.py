"""Provider D's notifications through HTTP on SQLite and PostgreSQL (checkouts/returns.py). Its
standard notifications carry a list of items, each signed on its own: every item acts, not the
first only (one body saying two checkouts were paid authorizes both intents; the same body sent
again moves nothing twice). One that cannot take its checkout is answered 503, never a 200 that
drops it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest

from payorch.checkouts import confirm, repository
from payorch.providers.provider_d import PROVIDER_D, wire
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime
from tests.checkouts.helpers import authorized_events, connector_id
from tests.kit import assert_error, mock_sandbox
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


async def test_a_notification_that_cannot_take_its_checkout_is_sent_again(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another request holds the checkout for longer than a confirmation takes (here 0.3 s): the
    notification answers 503 and moves nothing, so the provider sends it again; once the checkout
    is free, the same notification acts."""
    monkeypatch.setattr(confirm, "lease_length", lambda _: timedelta(seconds=0.3))
    sandbox = await mock_sandbox(runtime)
    credentials = registration_of(PROVIDER_D).mock_credentials(runtime.cipher, sandbox.application_id)
    intent, body = await start(client, sandbox, PROVIDER_D)
    item = await _paid_item(client, credentials, intent, body, "PSPBUSY000000001")
    notification = orjson.dumps({"live": "false", "notificationItems": [{"NotificationRequestItem": item}]})
    url = f"/v1/provider-notifications/{PROVIDER_D}/{await connector_id(client, sandbox, PROVIDER_D)}"
    async with runtime.database.transaction() as conn:
        checkout = await repository.active_for_intent(conn, intent["id"])
        assert checkout is not None
        now = runtime.clock.now()  # frozen: the lease stays held until released
        assert await repository.take_lease(conn, checkout.id, now, now + timedelta(hours=1))
    headers = {"Content-Type": "application/json"}
    busy = await client.post(url, content=notification, headers=headers)
    assert_error(busy, 503, "CONNECTOR_UNAVAILABLE")
    assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    async with runtime.database.transaction() as conn:
        await repository.release_lease(conn, checkout.id)
    again = await client.post(url, content=notification, headers=headers)
    assert again.status_code == 200, again.text
    assert (await read(client, sandbox, intent["id"]))["status"] == "AUTHORIZED"
    assert authorized_events(await events_of(runtime, intent["id"])) == 1
