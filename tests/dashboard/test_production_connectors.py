"""The providers page of a PRODUCTION application over plain HTTP (SQLite, PostgreSQL): a
connector added, changed (mode, enabled, priority, credentials) and removed through the forms,
with the provider's own credential fields and help; credentials write-only and encrypted; the
service's refusals beside the field; another application's connectors out of reach."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from payorch.connectors import repository
from payorch.connectors.records import Connector
from payorch.connectors.service import decrypt_credentials
from payorch.providers.base import Mode
from payorch.runtime import Runtime
from tests.cli_in_process import cli
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, create_intent, new_application
from tests.live import payorch_env

pytestmark = pytest.mark.slow

B = "provider_b_redirect_get"
TOKEN = "APP_USR-prod-token-0123456789"
HOOK = "prod-webhook-secret-9876543210"


async def stored(runtime: Runtime, app: Sandbox) -> list[Connector]:
    async with runtime.database.reading() as conn:
        return await repository.for_merchant(conn, app.merchant_account_id)


async def production(runtime: Runtime, client: httpx.AsyncClient) -> tuple[Sandbox, str]:
    app = await new_application(runtime, "PRODUCTION")
    return app, await sign_in(client, app)


def add_form(app: Sandbox, csrf: str, **values: str) -> tuple[str, dict[str, str]]:
    form = {"csrf": csrf, "provider": B, "mode": "PRODUCTION", "priority": "1", "enabled": "on", **values}
    return f"/dashboard/providers/{app.merchant_account_id}/connectors", form


def error_of(page: str, input_id: str) -> str:
    """The message shown beside the input ``input_id`` (its aria-describedby names it)."""
    found = re.search(
        rf'<p class="field-error" id="{re.escape(input_id)}-error" role="alert">([^<]*)</p>', page
    )
    assert found, page
    assert re.search(rf'id="{re.escape(input_id)}"[^>]*aria-invalid="true"[^>]*{input_id}-error', page), page
    return found.group(1)


async def test_a_production_connector_added_changed_and_removed(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    app, csrf = await production(runtime, client)
    page = (await client.get("/dashboard/providers")).text
    assert "No provider configured" in page and "POST /v1/admin" not in page
    add = f"add-{app.merchant_account_id}-{B}"
    # Only the modes a PRODUCTION application may use; each provider's own fields and help.
    modes = re.search(rf'<select id="{add}-mode" name="mode"[^>]*>(.*?)</select>', page, re.S)
    assert modes and re.findall(r'value="([A-Z]+)"', modes.group(1)) == ["SANDBOX", "PRODUCTION"]
    assert 'value="PRODUCTION" selected' in modes.group(1)
    assert f'<label for="access_token-{add}">access_token</label>' in page
    assert f'id="access_token-{add}-help">The API access token (Bearer).</p>' in page

    url, form = add_form(app, csrf, access_token=TOKEN, webhook_secret=HOOK)
    added = await client.post(url, data=form)
    assert added.status_code == 303, added.text
    [connector] = await stored(runtime, app)
    assert connector.mode is Mode.PRODUCTION and connector.provider == B and connector.enabled
    assert TOKEN not in (connector.encrypted_credentials or "")  # encrypted at rest
    assert decrypt_credentials(runtime.cipher, connector) == {"access_token": TOKEN, "webhook_secret": HOOK}
    page = (await client.get("/dashboard/providers?notice=added")).text
    assert "Provider added." in page and TOKEN not in page and HOOK not in page  # write-only
    assert f"<h3>{B}</h3>" in page and "<dd>PRODUCTION</dd>" in page and "<dd>set</dd>" in page

    # Mode, enabled and priority without new credentials: the old ones are kept.
    change = f"/dashboard/providers/{app.merchant_account_id}/{connector.id}"
    saved = await client.post(
        change, data={"csrf": csrf, "action": "priority", "mode": "SANDBOX", "priority": "3"}
    )
    assert saved.status_code == 303, saved.text
    [changed] = await stored(runtime, app)
    assert (changed.mode, changed.priority, changed.enabled) == (Mode.SANDBOX, 3, False)
    assert changed.encrypted_credentials == connector.encrypted_credentials
    back = {"csrf": csrf, "action": "priority", "mode": "PRODUCTION", "priority": "2", "enabled": "on"}
    assert (await client.post(change, data=back)).status_code == 303
    # New credentials replace the old ones.
    keys = {
        "csrf": csrf,
        "action": "credentials",
        "access_token": "rotated-token",
        "webhook_secret": "rotated-hook",
    }
    assert (await client.post(change, data=keys)).status_code == 303
    [rotated] = await stored(runtime, app)
    assert (rotated.mode, rotated.priority, rotated.enabled) == (Mode.PRODUCTION, 2, True)
    assert decrypt_credentials(runtime.cipher, rotated) == {
        "access_token": "rotated-token",
        "webhook_secret": "rotated-hook",
    }

    removed = await client.post(f"{change}/remove", data={"csrf": csrf})
    assert removed.status_code == 303 and removed.headers["location"] == "/dashboard/providers?notice=removed"
    assert await stored(runtime, app) == []
    assert "No provider configured" in (await client.get("/dashboard/providers")).text


async def test_refusals_are_shown_beside_their_field_without_the_secrets(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    app, csrf = await production(runtime, client)
    add = f"add-{app.merchant_account_id}-{B}"
    url, form = add_form(app, csrf, priority="7")
    none = await client.post(url, data=form)  # no credentials in PRODUCTION mode
    assert none.status_code == 400 and "required for PRODUCTION mode" in none.text
    assert f'<details class="card" id="{add}" open>' in none.text and 'value="7"' in none.text
    half = await client.post(url, data={**form, "access_token": TOKEN})
    assert half.status_code == 400 and error_of(half.text, f"webhook_secret-{add}") == "Field required."
    assert TOKEN not in half.text  # a refused form never shows a secret again
    mock = await client.post(url, data={**form, "mode": "MOCK"})
    assert mock.status_code == 403
    assert error_of(mock.text, f"{add}-mode") == "MOCK mode is only for SANDBOX applications."
    bad = await client.post(
        url, data={**form, "priority": "first", "access_token": TOKEN, "webhook_secret": HOOK}
    )
    assert (
        bad.status_code == 400 and error_of(bad.text, f"{add}-priority") == "must be a whole number such as 1"
    )
    assert await stored(runtime, app) == []

    assert (
        await client.post(url, data={**form, "access_token": TOKEN, "webhook_secret": HOOK})
    ).status_code == 303
    [connector] = await stored(runtime, app)
    change = f"/dashboard/providers/{app.merchant_account_id}/{connector.id}"
    mock = await client.post(
        change, data={"csrf": csrf, "action": "priority", "mode": "MOCK", "priority": "1"}
    )
    assert mock.status_code == 403 and "MOCK mode is only for SANDBOX" in error_of(
        mock.text, f"mode-{connector.id}"
    )
    big = await client.post(change, data={"csrf": csrf, "action": "priority", "priority": "99999999"})
    assert big.status_code == 400 and "less than or equal to 1000000" in error_of(
        big.text, f"priority-{connector.id}"
    )
    assert 'value="99999999"' in big.text  # what was typed, to correct it
    partial = await client.post(change, data={"csrf": csrf, "action": "credentials", "access_token": "new"})
    assert (
        partial.status_code == 400
        and error_of(partial.text, f"webhook_secret-{connector.id}") == "Field required."
    )
    [kept] = await stored(runtime, app)
    assert kept == connector  # nothing refused was saved
    # A second B for the merchant (a form from an older page): the service's 409, in that form.
    twice = await client.post(url, data={**form, "access_token": TOKEN, "webhook_secret": HOOK})
    assert twice.status_code == 409 and "already has a configuration for this provider" in twice.text
    assert f'href="#m-{app.merchant_account_id}"' in twice.text  # its add form is gone: the merchant
    forged = await client.post(
        url, data={**form, "csrf": "not-the-token", "access_token": TOKEN, "webhook_secret": HOOK}
    )
    assert forged.status_code == 403 and "Form expired" in forged.text


async def test_another_application_cannot_see_or_change_the_connectors(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    app, csrf = await production(runtime, client)
    url, form = add_form(app, csrf, access_token=TOKEN, webhook_secret=HOOK)
    assert (await client.post(url, data=form)).status_code == 303
    [connector] = await stored(runtime, app)
    other, other_csrf = await production(runtime, client)  # the same browser, signed in as another
    assert connector.id not in (await client.get("/dashboard/providers")).text
    ours = f"/dashboard/providers/{app.merchant_account_id}"
    attempts = [
        (f"{ours}/connectors", {**form, "csrf": other_csrf, "provider": "provider_a_card_form"}),
        (f"{ours}/{connector.id}", {"csrf": other_csrf, "action": "priority", "priority": "9"}),
        (
            f"{ours}/{connector.id}",
            {"csrf": other_csrf, "action": "credentials", "access_token": "x", "webhook_secret": "y"},
        ),
        (f"{ours}/{connector.id}/remove", {"csrf": other_csrf}),
        (f"/dashboard/providers/{other.merchant_account_id}/{connector.id}/remove", {"csrf": other_csrf}),
    ]
    for path, data in attempts:
        answer = await client.post(path, data=data)
        assert answer.status_code == 404, (path, answer.text)
    assert await stored(runtime, app) == [connector]


async def test_the_command_line_sees_and_changes_what_the_dashboard_added(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    app, csrf = await production(runtime, client)
    url, form = add_form(app, csrf, access_token=TOKEN, webhook_secret=HOOK)
    assert (await client.post(url, data=form)).status_code == 303
    env = payorch_env(database_url)
    merchant = ["--merchant", app.merchant_account_id]
    listed = cli(["connectors", "list", *merchant, "--json"], env)
    assert listed.returncode == 0, listed.stderr
    [item] = json.loads(listed.stdout)["items"]
    assert (item["provider"], item["mode"], item["has_credentials"]) == (B, "PRODUCTION", True)
    changed = cli(["connectors", "set", *merchant, item["id"], "--priority", "4", "--no-enabled"], env)
    assert changed.returncode == 0, changed.stderr
    page = (await client.get("/dashboard/providers")).text
    assert f'id="priority-{item["id"]}" name="priority" inputmode="numeric" value="4"' in page
    assert re.search(rf'id="enabled-{item["id"]}" name="enabled">', page)  # not ticked
    removed = await client.post(
        f"/dashboard/providers/{app.merchant_account_id}/{item['id']}/remove", data={"csrf": csrf}
    )
    assert removed.status_code == 303
    after = cli(["connectors", "list", *merchant, "--json"], env)
    assert json.loads(after.stdout)["items"] == []


async def test_a_connector_that_took_a_payment_is_disabled_not_removed(
    client: httpx.AsyncClient, sandbox: Sandbox, runtime: Runtime
) -> None:
    csrf = await sign_in(client, sandbox)
    base = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    made = await client.post(base, json={"provider": B, "mode": "MOCK"}, headers=sandbox.headers)
    assert made.status_code == 201, made.text
    intent = await create_intent(client, sandbox)
    checkout = await client.post(
        f"/v1/payment-intents/{intent['id']}/checkout", json={"provider": B}, headers=sandbox.headers
    )
    assert checkout.status_code in (200, 201), checkout.text
    connector_id = made.json()["id"]
    refused = await client.post(
        f"/dashboard/providers/{sandbox.merchant_account_id}/{connector_id}/remove", data={"csrf": csrf}
    )
    assert refused.status_code == 409 and "disable it (enabled false) instead" in refused.text
    assert f'href="#{connector_id}"' in refused.text  # the top of the page points at the card
    assert [c.id for c in await stored(runtime, sandbox)] == [connector_id]
