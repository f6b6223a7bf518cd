"""A payment held at a provider's simulator (capture_method manual), made through payorch's API
in-process: the intent, its checkout and the buyer approving on the provider's page. Shared by
the people views' tests (dashboard, command line, client)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from tests.kit import Sandbox
from tests.providers.helpers import checkout, create_intent, pay, read

HOLDING = "provider_c_redirect_get"  # declares holds, partial capture, void; charges USD and CLP


@dataclass(frozen=True)
class Held:
    intent_id: str
    payment_id: str


async def held_payment(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    *,
    amount: int = 150_000,
    currency: str = "USD",
    provider: str = HOLDING,
    reference: str = "order-held",
) -> Held:
    """An intent REQUIRES_CAPTURE at ``provider`` (``sandbox`` has its MOCK connector)."""
    created = await create_intent(
        client,
        sandbox,
        amount=amount,
        currency=currency,
        capture_method="manual",
        provider=provider,
        external_reference=reference,
    )
    started = await checkout(client, sandbox, str(created["id"]))
    assert started.status_code == 200, started.text
    await pay(client, started.json(), "approve")
    intent = await read(client, sandbox, str(created["id"]))
    assert intent["status"] == "REQUIRES_CAPTURE", intent
    return Held(str(created["id"]), str(intent["payment"]["id"]))
