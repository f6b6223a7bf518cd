"""Helpers shared by the tests of this directory (the browser's set-up is in tests/browser.py)."""

from __future__ import annotations

import httpx

from tests.kit import Sandbox


async def add_mock_connector(
    client: httpx.AsyncClient, app: Sandbox, provider: str = "provider_b_redirect_get"
) -> None:
    added = await client.post(
        f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors",
        json={"provider": provider, "mode": "MOCK"},
        headers=app.headers,
    )
    assert added.status_code == 201, added.text
