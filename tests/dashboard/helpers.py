"""Helpers shared by the tests of this directory."""

from __future__ import annotations

import os
from pathlib import Path

import httpx

from tests.kit import Sandbox

WIDTHS = ((1280, 900), (390, 844))


def shots_dir(backend_url: str) -> Path:
    backend = "postgres" if backend_url.startswith("postgres") else "sqlite"
    target = Path(os.environ.get("PAYORCH_E2E_SCREENSHOTS", ROOT / "build" / "screenshots")) / backend
    target.mkdir(parents=True, exist_ok=True)
    return target


async def add_mock_connector(
    client: httpx.AsyncClient, app: Sandbox, provider: str = "provider_b_redirect_get"
) -> None:
    added = await client.post(
        f"/v1/admin/merchant-accounts/{app.merchant_account_id}/connectors",
        json={"provider": provider, "mode": "MOCK"},
        headers=app.headers,
    )
    assert added.status_code == 201, added.text


ROOT = Path(__file__).resolve().parents[2]
