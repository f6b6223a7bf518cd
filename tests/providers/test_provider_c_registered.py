"""Provider C is registered: the CLI's MOCK connectors, the API's enum and the simulator's routes
know it (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import httpx
import pytest

from payorch.runtime import Runtime
from tests.connectors.helpers import run_cli

pytestmark = pytest.mark.slow

C = "provider_c_redirect_get"


async def test_mock_connectors_add_provider_c_with_priority_3(
    client: httpx.AsyncClient, database_url: str, runtime: Runtime
) -> None:
    done = run_cli(
        database_url, "applications", "create", "--name", "c", "--environment", "SANDBOX",
        "--mock-connectors", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    listed = await client.get(
        f"/v1/admin/merchant-accounts/{created['merchant_account_id']}/connectors",
        headers={"Authorization": f"Bearer {created['api_key']}"},
    )
    rows = [(i["provider"], i["mode"], i["priority"], i["enabled"]) for i in listed.json()["items"]]
    assert (C, "MOCK", 3, True) in rows


async def test_the_api_and_the_simulator_know_provider_c(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    assert C in document["components"]["schemas"]["CreatePaymentIntent"]["properties"]["provider"]["enum"]
    # Its simulator answers in the provider's own error shape (a key it does not know: 401).
    answer = await client.get(
        "/simulator/provider_c/v1/checkout/sessions/cs_test_nothing",
        headers={"Authorization": "Bearer sk_test_unknown"},
    )
    assert answer.status_code == 401 and answer.json()["error"]["type"] == "invalid_request_error"
