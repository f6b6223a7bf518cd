"""payorch_payment_intent_status_changes_total{provider, status}: a sandbox payment's moves are
counted by the provider of its checkout (the board's "payments by outcome and provider")."""

from __future__ import annotations

import httpx

from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.observability.scrape import scrape, value
from tests.providers.helpers import B, pay, read, start

NAME = "payorch_payment_intent_status_changes_total"


async def test_an_approved_and_a_declined_payment_are_counted_by_provider(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    before = await scrape(client)

    approved, body = await start(client, sandbox, B, external_reference="order-ok")
    await pay(client, body, "approve")
    declined, body = await start(client, sandbox, B, external_reference="order-no")
    await pay(client, body, "reject")
    assert (await read(client, sandbox, approved["id"]))["status"] == "AUTHORIZED"
    assert (await read(client, sandbox, declined["id"]))["status"] == "FAILED"

    after = await scrape(client)
    for status, moved in (("REQUIRES_ACTION", 2), ("AUTHORIZED", 1), ("FAILED", 1)):
        counted = value(after, NAME, provider=B, status=status) - value(
            before, NAME, provider=B, status=status
        )
        assert counted == moved, status
