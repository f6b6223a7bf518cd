"""Payments decided by the simulated market (docs/simulator.md), for the success-rate tests."""

from __future__ import annotations

from typing import Any

import httpx

from tests.kit import Sandbox
from tests.providers.browser import Browser
from tests.providers.helpers import checkout, create_intent, read

MARKET = "/simulator/controls/market"


async def set_market(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    provider: str,
    approve: float,
    decline: float = 0.0,
    give_up: float = 0.0,
    pending: float = 0.0,
) -> None:
    if approve + decline + give_up + pending < 1:
        decline = 1 - approve - give_up - pending
    body = {
        "provider": provider,
        "approve": approve,
        "decline": decline,
        "give_up": give_up,
        "pending": pending,
    }
    response = await client.post(MARKET, json=body, headers=sandbox.headers)
    assert response.status_code == 200, response.text


async def market_payment(client: httpx.AsyncClient, sandbox: Sandbox) -> tuple[dict[str, Any], str]:
    """An ``auto`` checkout the market's buyer decides; its answer and the intent's status after."""
    intent = await create_intent(client, sandbox)
    answer = await checkout(client, sandbox, intent["id"])
    assert answer.status_code == 200, answer.text
    bought = await client.post(
        MARKET + "/buy", json={"payment_intent_id": intent["id"]}, headers=sandbox.headers
    )
    assert bought.status_code == 200, bought.text
    back = bought.json()["return"]
    if back is not None:
        await Browser(client).open(back["url"], back["method"], back["fields"] or None)
    return answer.json(), (await read(client, sandbox, intent["id"]))["status"]
