"""Steps of the cancel tests: the cancel request, and what each provider's books say."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select

from payorch.db.tables.simulator import simulator_a_transactions
from payorch.runtime import Runtime
from payorch.simulator.credentials import mock_credentials
from tests.kit import Sandbox
from tests.providers.browser import Browser
from tests.providers.helpers import open_checkout


async def cancel(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    intent_id: str,
    body: dict[str, Any] | None = None,
    key: str | None = None,
) -> httpx.Response:
    headers = dict(sandbox.headers)
    if key:
        headers["Idempotency-Key"] = key
    return await client.post(
        f"/v1/payment-intents/{intent_id}/cancel", json={} if body is None else body, headers=headers
    )


async def a_committed(runtime: Runtime, token: str) -> bool:
    """Provider A charges a token only once it is committed."""
    async with runtime.database.reading() as conn:
        row = (
            await conn.execute(
                select(simulator_a_transactions.c.committed_at).where(
                    simulator_a_transactions.c.token == token
                )
            )
        ).first()
    assert row is not None
    return row.committed_at is not None


async def b_statuses(
    client: httpx.AsyncClient, runtime: Runtime, sandbox: Sandbox, intent_id: str
) -> list[str]:
    """The statuses of provider B's payments for the intent (its external_reference)."""
    token = mock_credentials(runtime.cipher, "provider_b", sandbox.application_id)["access_token"]
    found = await client.get(
        "/simulator/provider_b/v1/payments/search",
        params={"external_reference": intent_id},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert found.status_code == 200, found.text
    return [p["status"] for p in found.json()["results"]]


async def try_to_pay(client: httpx.AsyncClient, checkout_body: dict[str, Any]) -> None:
    """The buyer opens the page and approves if the page still offers it (a stopped provider B
    preference does not), following the return."""
    trip = await open_checkout(client, checkout_body)
    page = trip.page
    if page is not None and any(("outcome", "approve") in f.buttons for f in page.forms):
        await Browser(client).press(page, "outcome", "approve")
