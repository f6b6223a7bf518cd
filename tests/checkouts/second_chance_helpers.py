"""Helpers of the second-chance tests (docs/routing.md, "A second chance after a decline")."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import func, select

from payorch.db.tables.providers import checkouts
from payorch.runtime import Runtime
from tests.checkouts.helpers import DECLINE, MARKET
from tests.kit import Sandbox, mock_sandbox
from tests.providers.browser import Browser, Trip
from tests.providers.helpers import A, B, checkout, create_intent
from tests.routing.helpers import C, put_routing


async def opted_in(
    client: httpx.AsyncClient, sandbox: Sandbox, *, retry: bool = True, max_attempts: int = 3
) -> None:
    """Routing B, then C, then A, with a second chance after a decline."""
    rule = {"name": "b-first", "if": {"currency": ["CLP"]}, "then": {"priority": [B, C, A]}}
    body = {"rules": [rule], "on_decline": {"retry": retry, "max_attempts": max_attempts}}
    response = await put_routing(client, sandbox, body)
    assert response.status_code == 200, response.text


async def started(client: httpx.AsyncClient, sandbox: Sandbox) -> tuple[str, dict[str, Any]]:
    """An intent and its first checkout through the routing (``auto``)."""
    intent = await create_intent(client, sandbox)
    response = await checkout(client, sandbox, intent["id"])
    assert response.status_code == 200, response.text
    return str(intent["id"]), response.json()


async def opted_in_start(
    client: httpx.AsyncClient, runtime: Runtime, *, retry: bool = True, max_attempts: int = 3
) -> tuple[Sandbox, str, dict[str, Any]]:
    """A merchant of its own, ``opted_in``, and an intent started there: the intent's id and its
    first checkout."""
    sandbox = await mock_sandbox(runtime)
    await opted_in(client, sandbox, retry=retry, max_attempts=max_attempts)
    return (sandbox, *await started(client, sandbox))


async def market_declines(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str, provider: str) -> Trip:
    """The buyer is declined at ``provider`` (the simulated market: a generic decline) and comes
    back; answer where the browser ended."""
    answer = await client.post(MARKET, json={"provider": provider, **DECLINE}, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    bought = await client.post(
        MARKET + "/buy", json={"payment_intent_id": intent_id}, headers=sandbox.headers
    )
    assert bought.status_code == 200, bought.text
    back = bought.json()["return"]
    return await Browser(client).open(back["url"], back["method"], back["fields"] or None)


async def press_retry(client: httpx.AsyncClient, trip: Trip) -> Trip:
    """The second-chance page's one button."""
    assert trip.page is not None and "/checkout-retry/" in trip.page.url, trip
    return await Browser(client).press(trip.page, "retry", "1")


async def checkouts_of(runtime: Runtime, intent_id: str) -> int:
    async with runtime.database.transaction() as conn:
        query = select(func.count()).select_from(checkouts).where(checkouts.c.payment_intent_id == intent_id)
        return int((await conn.execute(query)).scalar_one())


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]
