"""The dashboard knows provider C from its registration, over plain HTTP (SQLite, PostgreSQL): its
credential fields, the sandbox's test payment and the payments filter."""

from __future__ import annotations

import re

import httpx

from tests.dashboard.forms import start_test_payment
from tests.dashboard.helpers import add_mock_connector
from tests.dashboard.signing import sign_in
from tests.kit import Sandbox

C = "provider_c_redirect_get"


async def test_provider_c_in_the_dashboard(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    csrf = await sign_in(client, sandbox)
    await add_mock_connector(client, sandbox, C)
    page = await client.get("/dashboard/providers")
    assert page.status_code == 200 and f"<h3>{C}</h3>" in page.text
    fields = re.findall(r'id="([a-z_]+)-cfg_[0-9a-z]+" name="\1" type="password"', page.text)
    assert fields == ["secret_key", "webhook_secret"]  # in the order its credentials declare them
    assert f'<option value="{C}">' in (await client.get("/dashboard/sandbox")).text
    assert f'<option value="{C}">' in (await client.get("/dashboard/payments")).text
    started = await start_test_payment(client, csrf, sandbox, amount="15000", provider=C)
    assert started.status_code == 303, started.text
    assert started.headers["location"].startswith("http://testserver/simulator/provider_c/")
