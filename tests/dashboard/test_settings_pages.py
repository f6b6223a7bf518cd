"""Providers, API keys and the sandbox's test payment, over plain HTTP (SQLite, PostgreSQL)."""

from __future__ import annotations

import re

import httpx

from payorch.connectors import repository as connectors
from payorch.runtime import Runtime
from tests.dashboard.forms import start_test_payment
from tests.dashboard.helpers import add_mock_connector
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, new_application

KEY = re.compile(r'<code id="secret">(pay_sb_[0-9a-f]+_[0-9a-f]+)</code>')
REVOKE = re.compile(r'action="/dashboard/api-keys/(key_[0-9a-z]+)/revoke"')


async def test_priority_enabled_and_credentials_of_a_connector(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    csrf = await sign_in(client, sandbox)
    assert "No provider configured" in (await client.get("/dashboard/providers")).text
    await add_mock_connector(client, sandbox)
    page = await client.get("/dashboard/providers")
    assert page.status_code == 200 and "status-available" in page.text
    found = re.findall(
        rf'action="/dashboard/providers/{sandbox.merchant_account_id}/(cfg_[0-9a-z]+)"', page.text
    )
    connector_id = found[0]
    url = f"/dashboard/providers/{sandbox.merchant_account_id}/{connector_id}"
    saved = await client.post(url, data={"csrf": csrf, "action": "priority", "priority": "7"})
    assert saved.status_code == 303
    async with runtime.database.reading() as conn:
        [stored] = [
            c
            for c in await connectors.for_merchant(conn, sandbox.merchant_account_id)
            if c.id == connector_id
        ]
    assert stored.priority == 7 and stored.enabled is False  # the box was not ticked
    bad = await client.post(url, data={"csrf": csrf, "action": "priority", "priority": "first"})
    assert bad.status_code == 400 and "whole number" in bad.text
    fields = re.findall(rf'id="([a-z_]+)-{connector_id}" name="\1" type="password"', page.text)
    assert fields, page.text
    missing = await client.post(url, data={"csrf": csrf, "action": "credentials"})
    assert missing.status_code == 400 and "fill in" in missing.text
    values = {name: f"secret-{name}-value" for name in fields}
    done = await client.post(url, data={"csrf": csrf, "action": "credentials", **values})
    assert done.status_code == 303
    after = await client.get("/dashboard/providers?notice=credentials")
    assert "Credentials saved" in after.text
    assert not any(value in after.text for value in values.values())  # write-only
    async with runtime.database.reading() as conn:
        [stored] = [
            c
            for c in await connectors.for_merchant(conn, sandbox.merchant_account_id)
            if c.id == connector_id
        ]
    assert stored.has_credentials and "secret-" not in (stored.encrypted_credentials or "")
    other = await new_application(runtime)
    theirs = await client.post(
        f"/dashboard/providers/{other.merchant_account_id}/{connector_id}",
        data={"csrf": csrf, "action": "priority", "priority": "1"},
    )
    assert theirs.status_code == 404


async def test_key_create_shown_once_and_revoke_not_the_last(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    csrf = await sign_in(client, sandbox)
    [own] = REVOKE.findall((await client.get("/dashboard/api-keys")).text)
    last = await client.post(f"/dashboard/api-keys/{own}/revoke", data={"csrf": csrf})
    assert last.status_code == 409 and "last active API key" in last.text
    created = await client.post("/dashboard/api-keys", data={"csrf": csrf, "name": "checkout server"})
    key = KEY.search(created.text)
    assert key and "shown only once" in created.text
    listing = (await client.get("/dashboard/api-keys")).text
    assert key.group(1) not in listing and "checkout server" in listing
    works = await client.get("/v1/payment-intents", headers={"Authorization": f"Bearer {key.group(1)}"})
    assert works.status_code == 200
    revoked = await client.post(f"/dashboard/api-keys/{own}/revoke", data={"csrf": csrf})
    assert revoked.status_code == 303
    # A person's session does not hang on a key: revoking the one they made the app with leaves it.
    assert (await client.get("/dashboard/overview")).status_code == 200


async def test_a_test_payment_opens_the_simulator_and_returns_to_the_intent(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    csrf = await sign_in(client, sandbox)
    await add_mock_connector(client, sandbox)
    page = await client.get("/dashboard/sandbox")
    assert "Make a test payment" in page.text
    started = await start_test_payment(
        client, csrf, sandbox, amount="1500", provider="provider_b_redirect_get"
    )
    assert started.status_code == 303, started.text
    assert started.headers["location"].startswith("http://testserver/simulator/")
    listed = (await client.get("/v1/payment-intents", headers=sandbox.headers)).json()["items"]
    assert listed[0]["status"] == "REQUIRES_ACTION"
    back = await client.get(f"/dashboard/sandbox/returned?payment_intent_id={listed[0]['id']}")
    assert back.headers["location"] == f"/dashboard/payments/{listed[0]['id']}"


async def test_production_applications_have_no_sandbox_page(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live = await new_application(runtime, "PRODUCTION")
    await sign_in(client, live)
    assert (await client.get("/dashboard/sandbox")).status_code == 404
