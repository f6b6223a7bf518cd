"""GET /v1/admin/merchant-accounts: a lost merchant id is recovered with the API key."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import httpx

from payorch.applications.records import MerchantAccount
from payorch.applications.repository import insert_merchant
from payorch.ids import new_id
from payorch.runtime import Runtime
from tests.kit import Sandbox, new_application

URL = "/v1/admin/merchant-accounts"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def test_lists_the_applications_merchants_newest_first(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox
) -> None:
    second = MerchantAccount(new_id("mrc"), sandbox.application_id, "second shop", datetime.now(UTC))
    async with runtime.database.transaction() as conn:
        await insert_merchant(conn, second)
    other = await new_application(runtime)

    response = await client.get(URL, headers=sandbox.headers)
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [m["id"] for m in items] == [second.id, sandbox.merchant_account_id]
    assert items[0]["name"] == "second shop" and items[1]["name"] == "shop"
    assert all(set(m) == {"id", "name", "created_at"} for m in items)
    assert all(TIMESTAMP.match(m["created_at"]) for m in items)
    theirs = (await client.get(URL, headers=other.headers)).json()["items"]
    assert [m["id"] for m in theirs] == [other.merchant_account_id]


async def test_needs_a_key_and_takes_no_parameter(client: httpx.AsyncClient, sandbox: Sandbox) -> None:
    assert (await client.get(URL)).status_code == 401
    response = await client.get(URL + "?limit=5", headers=sandbox.headers)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["errors"][0]["field"] == "limit"
