"""Every change outside keys, users and sign-in writes one activity entry in its own transaction
(docs/access.md, "What is logged"), on SQLite and PostgreSQL: refunds, cancels, connectors,
routing versions, webhook endpoints and deliveries, reconciliation (a key's requests and the
worker's runs), exports; through the API with a key and, for what only the dashboard does
(removing a connector), through its form in a key's session. A change refused (409, 404) leaves
no entry, and no secret the test made (API keys, webhook secrets, connector credentials) is in
any column of any row of the log, as written or in base64 or hex."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from payorch.db.tables.activity import activity_log
from payorch.runtime import Runtime
from tests.dashboard.signing import person_of, sign_in
from tests.kit import ENDPOINTS, Sandbox, authorized_payment, create_intent, mock_sandbox, new_application
from tests.payments.fakes import OK, REJECT, FakeGateway
from tests.reconciliation.helpers import C, made, paid, reconcile

A = "provider_a_redirect_post"
B = "provider_b_redirect_get"
A_CREDENTIALS = {"commerce_code": "597055555532", "api_key": "activity-secret-api-key-1"}
A_ROTATED = {"commerce_code": "597055555532", "api_key": "activity-secret-api-key-2"}


@pytest.fixture
def gateway() -> FakeGateway:
    return FakeGateway()


@pytest.fixture
def refund_gateway(gateway: FakeGateway) -> FakeGateway:
    return gateway


async def log_of(runtime: Runtime, application_id: str | None = None) -> list[Any]:
    """The application's entries in their chain's order (every entry, without an application)."""
    query = select(activity_log).order_by(activity_log.c.application_id, activity_log.c.seq)
    if application_id is not None:
        query = query.where(activity_log.c.application_id == application_id)
    async with runtime.database.reading() as conn:
        return list((await conn.execute(query)).all())


async def key_id(runtime: Runtime, app: Sandbox) -> str:
    return (await runtime.authenticator.authenticate(f"Bearer {app.api_key}")).credential_id


def connectors_path(app: Sandbox) -> str:
    return f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors"


def routing_path(app: Sandbox, tail: str = "") -> str:
    return f"/v1/admin/merchant-accounts/{app.merchant_account_id}/routing{tail}"


async def ok(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return dict(response.json()) if response.content else {}


async def unlogged(
    response: httpx.Response, status: int, runtime: Runtime, app: Sandbox, before: int
) -> None:
    """A refused change (or none at all): its status, and no entry more than ``before``."""
    assert response.status_code == status, response.text
    assert len(await log_of(runtime, app.application_id)) == before, response.text


async def money_changes(
    client: httpx.AsyncClient, runtime: Runtime, gateway: FakeGateway, shop: Sandbox
) -> None:
    """Refunds, a cancel, an export and a reconciliation day with a finding resolved."""
    paid_intent = await authorized_payment(runtime, shop, amount=1000)
    refunds = f"/v1/payments/{paid_intent.payment_id}/refunds"
    await ok(await client.post(refunds, json={"amount": 300}, headers=shop.headers), 201)
    # More than is left: refused before anything is written.
    await unlogged(
        await client.post(refunds, json={"amount": 5000}, headers=shop.headers), 422, runtime, shop, 1
    )
    # The provider refuses: the refund stays, FAILED, and so does its entry (the request was made).
    gateway.mode = REJECT
    rejected = await client.post(refunds, json={"amount": 100}, headers=shop.headers)
    assert rejected.status_code == 502, rejected.text
    gateway.mode = OK

    intent = await create_intent(client, shop)
    cancel = f"/v1/payment-intents/{intent['id']}/cancel"
    await ok(await client.post(cancel, json={"reason": "out of stock"}, headers=shop.headers))
    await unlogged(await client.post(cancel, json={}, headers=shop.headers), 409, runtime, shop, 3)

    exported = await client.get(
        "/v1/exports/payments", params={"from": "2000-01-01", "to": "2100-01-01"}, headers=shop.headers
    )
    assert exported.status_code == 200, exported.text

    at_c = await paid(client, shop, C, 3000)
    await made(client, shop, provider=C, kind="refunded_at_provider", payment_intent_id=at_c["id"])
    [finding] = (await reconcile(client, shop, runtime))["findings"]
    resolve = f"/v1/reports/reconciliation/findings/{finding['id']}/resolve"
    await ok(await client.post(resolve, json={"note": "booked"}, headers=shop.headers))
    before = len(await log_of(runtime, shop.application_id))
    await unlogged(
        await client.post(resolve, json={"note": "twice"}, headers=shop.headers), 409, runtime, shop, before
    )


async def configuration_changes(client: httpx.AsyncClient, runtime: Runtime, admin: Sandbox) -> list[str]:
    """Connectors, routing versions, a webhook endpoint's life; answers the webhook secrets."""
    body = {"provider": A, "mode": "SANDBOX", "priority": 2, "credentials": A_CREDENTIALS}
    a = await ok(await client.post(connectors_path(admin), json=body, headers=admin.headers), 201)
    patch = {"credentials": A_ROTATED, "priority": 3}
    await ok(await client.patch(f"{connectors_path(admin)}/{a['id']}", json=patch, headers=admin.headers))
    await unlogged(
        await client.post(connectors_path(admin), json=body, headers=admin.headers), 409, runtime, admin, 2
    )
    same = await client.patch(
        f"{connectors_path(admin)}/{a['id']}", json={"priority": 3}, headers=admin.headers
    )
    await unlogged(same, 200, runtime, admin, 2)  # nothing changed: no entry
    mock_b = {"provider": B, "mode": "MOCK", "priority": 1}
    b = await ok(await client.post(connectors_path(admin), json=mock_b, headers=admin.headers), 201)
    # Removing a connector is the dashboard's (and the command line's) alone: an owner signed
    # in as themselves (password and TOTP) removes it.
    csrf = await sign_in(client, admin)
    removed = await client.post(
        f"/dashboard/providers/{admin.merchant_account_id}/{b['id']}/remove", data={"csrf": csrf}
    )
    assert removed.status_code == 303, removed.text

    program = {"default": "priority", "rules": []}
    await ok(await client.put(routing_path(admin), json=program, headers=admin.headers))
    draft = {**program, "activate": False}
    saved = await ok(
        await client.post(routing_path(admin, "/versions"), json=draft, headers=admin.headers), 201
    )
    activate = routing_path(admin, f"/versions/{saved['version']}/activate")
    await ok(await client.post(activate, headers=admin.headers))

    created = await ok(
        await client.post(
            ENDPOINTS, json={"url": "https://hooks.example/in?token=receiver-token"}, headers=admin.headers
        ),
        201,
    )
    endpoint = created["data"]["id"]
    sent = await ok(await client.post(f"{ENDPOINTS}/{endpoint}/test", headers=admin.headers), 202)
    retry = f"{ENDPOINTS}/{endpoint}/deliveries/{sent['id']}/retry"
    await ok(await client.post(retry, headers=admin.headers), 202)
    recover = {"since": "2000-01-01T00:00:00Z"}
    await ok(await client.post(f"{ENDPOINTS}/{endpoint}/recover", json=recover, headers=admin.headers))
    rotated = await ok(
        await client.post(
            f"{ENDPOINTS}/{endpoint}/secret/rotate", json={"overlap_seconds": 60}, headers=admin.headers
        )
    )
    update = {"url": "https://hooks.example/other", "enabled": False}
    await ok(await client.patch(f"{ENDPOINTS}/{endpoint}", json=update, headers=admin.headers))
    await ok(await client.delete(f"{ENDPOINTS}/{endpoint}", headers=admin.headers), 204)
    before = len(await log_of(runtime, admin.application_id))
    await unlogged(
        await client.delete(f"{ENDPOINTS}/{endpoint}", headers=admin.headers), 404, runtime, admin, before
    )
    return [created["data"]["secret"], rotated["data"]["secret"]]


def forms(secret: str) -> set[str]:
    """A secret as written, base64 and hex; a hexadecimal secret also as its bytes' base64."""
    found = {secret, base64.b64encode(secret.encode()).decode(), secret.encode().hex()}
    found |= {part for part in secret.split("_") if len(part) >= 16}  # an API key's secret part
    try:
        found.add(base64.b64encode(bytes.fromhex(secret)).decode())
    except ValueError:
        pass
    return found


def text_of(value: object) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)


async def test_each_change_writes_one_entry_by_its_actor_and_no_secret(
    client: httpx.AsyncClient, runtime: Runtime, gateway: FakeGateway
) -> None:
    shop = await mock_sandbox(runtime)
    admin = await new_application(runtime)
    await money_changes(client, runtime, gateway, shop)
    webhook_secrets = await configuration_changes(client, runtime, admin)

    shop_key, admin_key = await key_id(runtime, shop), await key_id(runtime, admin)
    by_key = ("api_key", shop_key)
    assert [(e.action, e.actor_type, e.actor_id) for e in await log_of(runtime, shop.application_id)] == [
        ("refund.created", *by_key),
        ("refund.created", *by_key),  # the one the provider refused
        ("payment_intent.canceled", *by_key),
        ("export.created", *by_key),
        ("reconciliation.run_requested", *by_key),
        ("reconciliation.run_finished", "system", "reconciliation"),
        ("reconciliation.finding_resolved", *by_key),
    ]
    whole_admin_log = await log_of(runtime, admin.application_id)
    assert [e.seq for e in whole_admin_log] == list(range(1, len(whole_admin_log) + 1))
    # The owner's invite, enrollment and sign-in have entries of their own (test_sign_in.py).
    admin_log = [e for e in whole_admin_log if not e.action.startswith("user.")]
    assert {e.action for e in whole_admin_log} - {e.action for e in admin_log} >= {"user.signed_in"}
    assert [e.action for e in admin_log] == [
        "connector.created",
        "connector.updated",
        "connector.created",
        "connector.removed",  # through the dashboard, by the signed-in owner
        "routing.version_created",
        "routing.version_activated",  # PUT: saved and active at once
        "routing.version_created",
        "routing.version_activated",
        "webhook_endpoint.created",
        "webhook_endpoint.tested",
        "webhook_delivery.retried",
        "webhook_endpoint.recovered",
        "webhook_endpoint.secret_rotated",
        "webhook_endpoint.updated",
        "webhook_endpoint.deleted",
    ]
    owner = person_of(admin)
    [removal] = [e for e in admin_log if e.action == "connector.removed"]
    assert (removal.actor_type, removal.actor_id[:4], removal.actor_email) == ("user", "usr_", owner.email)
    assert {(e.actor_type, e.actor_id) for e in admin_log if e.action != "connector.removed"} == {
        ("api_key", admin_key)
    }
    # What changed, by name, never the value of a credential or a secret.
    assert admin_log[0].changes["credentials"] == "set"
    assert admin_log[1].changes == {"priority": 3, "credentials": "replaced"}
    assert admin_log[8].changes["secret"] == admin_log[12].changes["secret"] == "shown once"
    assert admin_log[8].changes["url"] == "https://hooks.example"
    assert admin_log[13].changes == {"url": "path changed", "enabled": False}
    # The requests' origin; the worker's run has none.
    shop_log = await log_of(runtime, shop.application_id)
    for entry in [*shop_log, *admin_log]:
        expected = (None, None) if entry.actor_type == "system" else ("127.0.0.1", True)
        assert (entry.origin_ip, entry.request_id is not None if entry.origin_ip else None) == expected

    secrets = [
        shop.api_key,
        admin.api_key,
        *webhook_secrets,
        *A_CREDENTIALS.values(),
        *A_ROTATED.values(),
        "receiver-token",
        owner.password,
        owner.totp_secret.replace(" ", ""),
        *owner.recovery_codes,
    ]
    everything = [text_of(value) for row in await log_of(runtime) for value in row]
    assert any("https://hooks.example" in value for value in everything)  # the search sees `changes`
    for secret in secrets:
        for form in forms(secret) - {"597055555532"}:  # a merchant code, not a secret (and a number)
            assert not any(form in value for value in everything), f"{secret!r} found in the activity log"
