"""Where each provider sends its notifications, over plain HTTP (SQLite, PostgreSQL): the providers
page shows each connector's own URL (the public URL, the provider, the connector) and what to do
with it, from the provider's registration; docs/deployment.md's going-live table says the same
for every registered provider."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
import pytest

from payorch.providers.provider_b import PROVIDER_B
from payorch.providers.provider_c import PROVIDER_C
from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registration import ProviderRegistration
from payorch.providers.registry import REGISTRATIONS
from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox, mock_sandbox, new_application

# Its tests make people only to sign them in: each password is hashed once.
pytestmark = pytest.mark.usefixtures("passwords_hashed_once")

ROOT = Path(__file__).resolve().parents[2]
B, C, D = PROVIDER_B, PROVIDER_C, PROVIDER_D
# Each provider that notifies, with SANDBOX credentials (the URL is shown for those).
SANDBOX_CREDENTIALS = {
    B: {"access_token": "TEST-123-abc", "webhook_secret": "b-hook-secret"},
    C: {"secret_key": "sk_test_abc", "webhook_secret": "whsec_abc"},
    D: {"api_key": "AQE_test_abc", "merchant_account": "ShopECOM", "hmac_key": "44782DEF547AAA06C9"},
}


async def connectors(client: httpx.AsyncClient, sandbox: Sandbox) -> dict[str, str]:
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    listed = (await client.get(url, headers=sandbox.headers)).json()["items"]
    return {item["provider"]: item["id"] for item in listed}


def said(page: str, connector_id: str) -> str:
    """The Notifications line of ``connector_id`` on the providers page, as text."""
    found = re.search(rf'<dd id="notifications-{connector_id}">(.*?)</dd>', page, re.DOTALL)
    assert found, page
    text = re.sub(r"<[^>]+>", "", found.group(1).replace("<br>", " "))
    return " ".join(html.unescape(text).split())


async def test_each_connector_shows_its_notification_url_and_events(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await new_application(runtime)
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    for provider, credentials in SANDBOX_CREDENTIALS.items():
        body = {"provider": provider, "mode": "SANDBOX", "credentials": credentials}
        assert (await client.post(url, json=body, headers=sandbox.headers)).status_code == 201
    ids = await connectors(client, sandbox)
    await sign_in(client, sandbox)
    page = (await client.get("/dashboard/providers")).text
    public = runtime.settings.public_url
    notifying = {r.provider_id for r in REGISTRATIONS if r.notifications is not None}
    assert set(SANDBOX_CREDENTIALS) == notifying, "SANDBOX_CREDENTIALS: one entry per provider that notifies"
    for provider in SANDBOX_CREDENTIALS:
        line = said(page, ids[provider])
        assert line.startswith(f"{public}/v1/provider-notifications/{provider}/{ids[provider]} "), line
        secret = next(r for r in REGISTRATIONS if r.provider_id == provider).notifications
        assert secret is not None and secret.signed_with in line, line
    c = said(page, ids[C])
    assert "Register this URL in the provider's own dashboard for the events" in c
    registered = next(r for r in REGISTRATIONS if r.provider_id == C).notifications
    assert registered is not None and registered.events
    assert all(event in c for event in registered.events), c
    b = said(page, ids[B])
    assert "payorch sends it with each checkout: nothing to register" in b and "payment, merchant_order" in b
    assert "SANDBOX" in page and "b-hook-secret" not in page


async def test_mock_connectors_and_a_provider_that_sends_none(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    ids = await connectors(client, sandbox)
    await sign_in(client, sandbox)
    page = (await client.get("/dashboard/providers")).text
    for registration in REGISTRATIONS:
        line = said(page, ids[registration.provider_id])
        if registration.notifications is None:
            assert line.startswith("none: this provider sends none"), line
        else:
            assert "/v1/provider-notifications/" in line and "The simulator sends to it by itself." in line


@pytest.mark.parametrize("registration", REGISTRATIONS, ids=lambda r: r.provider_id)
def test_the_going_live_table_says_what_each_registration_declares(
    registration: ProviderRegistration,
) -> None:
    text = (ROOT / "docs" / "deployment.md").read_text()
    section = text.split("## Going live: provider notifications", 1)[1].split("\n## ", 1)[0]
    row = next(
        (line for line in section.splitlines() if line.startswith(f"| `{registration.provider_id}` |")), None
    )
    assert row is not None, f"docs/deployment.md's going-live table has no row for {registration.provider_id}"
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    events = cells[2]
    sends = registration.notifications
    if sends is None:
        assert events == "none", row
        return
    assert re.findall(r"`([^`]+)`", events) == list(sends.events), row
    assert ("register it" in cells[1]) == sends.registered_at_provider, row
