"""The simulated market through HTTP: the simulator's buyer decides each registered provider's
checkouts by itself (approve, decline, give up, leave in process), no page opened; the service
learns the outcome from the return (and notifications) as from a real buyer."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.providers.provider_d import PROVIDER_D
from payorch.providers.registry import PROVIDER_IDS
from payorch.runtime import Runtime
from tests.kit import Sandbox, mock_sandbox, new_application
from tests.providers.browser import Browser
from tests.providers.helpers import read, start

MARKET = "/simulator/controls/market"
A, D = "provider_a_redirect_post", PROVIDER_D
# Where a "pending" buyer stays on the provider's page (the market's answer has no return).
STAYS_ON_PAGE = {A: "A has no in process", D: "D's page has no pending outcome"}
ALL_OF = {
    "approve": {"approve": 1.0, "decline": 0.0, "give_up": 0.0, "pending": 0.0},
    "decline": {"approve": 0.0, "decline": 1.0, "give_up": 0.0, "pending": 0.0},
    "give_up": {"approve": 0.0, "decline": 0.0, "give_up": 1.0, "pending": 0.0},
    "pending": {"approve": 0.0, "decline": 0.0, "give_up": 0.0, "pending": 1.0},
}
# What the service shows once the buyer came back, per market outcome.
SHOWN = {"approve": "AUTHORIZED", "decline": "FAILED", "give_up": "CANCELLED", "pending": "PROCESSING"}


async def _buy(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> httpx.Response:
    return await client.post(MARKET + "/buy", json={"payment_intent_id": intent_id}, headers=sandbox.headers)


async def _back(client: httpx.AsyncClient, back: dict[str, Any]) -> None:
    """The buyer's browser goes back to the shop as the answer says (a page of ours)."""
    trip = await Browser(client).open(back["url"], back["method"], back["fields"] or None)
    assert trip.left_to is not None and trip.left_to.startswith("https://shop.example/"), trip


@pytest.mark.parametrize("provider", PROVIDER_IDS)
@pytest.mark.parametrize("outcome", list(ALL_OF))
async def test_the_market_decides_each_outcome_at_every_provider(
    client: httpx.AsyncClient, runtime: Runtime, provider: str, outcome: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    market = {"provider": provider, **ALL_OF[outcome]}
    answer = await client.post(MARKET, json=market, headers=sandbox.headers)
    assert answer.status_code == 200 and answer.json() == market, answer.text
    intent, _ = await start(client, sandbox, provider, currency="CLP")

    bought = await _buy(client, sandbox, intent["id"])
    assert bought.status_code == 200, bought.text
    body = bought.json()
    assert (body["provider"], body["outcome"]) == (provider, outcome) and body["references"]
    if body["return"] is None:  # the buyer stays on the page: it never comes back
        assert outcome == "pending" and provider in STAYS_ON_PAGE
        assert (await read(client, sandbox, intent["id"]))["status"] == "REQUIRES_ACTION"
    else:
        await _back(client, body["return"])
        assert (await read(client, sandbox, intent["id"]))["status"] == SHOWN[outcome]
    # Decided once: nothing is left open for the buyer (A's pending transaction stays open, and
    # D's session after a refusal: three refusals end it, docs/simulator.md).
    again = await _buy(client, sandbox, intent["id"])
    still_open = body["return"] is None or (provider, outcome) == (D, "decline")
    assert again.status_code == (200 if still_open else 404), again.text


async def test_markets_are_listed_replaced_and_cleared_per_application(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox, other = await mock_sandbox(runtime), await mock_sandbox(runtime)
    first = {"provider": "provider_b", "approve": 0.6, "decline": 0.3, "give_up": 0.05, "pending": 0.05}
    assert (await client.post(MARKET, json=first, headers=sandbox.headers)).status_code == 200
    second = {**first, "approve": 0.9, "decline": 0.0}
    assert (await client.post(MARKET, json=second, headers=sandbox.headers)).status_code == 200
    listed = (await client.get(MARKET, headers=sandbox.headers)).json()["items"]
    assert listed == [{**second, "provider": "provider_b_redirect_get"}]
    assert (await client.get(MARKET, headers=other.headers)).json() == {"items": []}

    # Without a market the buyer does not decide: the page waits for a click.
    intent, _ = await start(client, other, "provider_b_redirect_get", currency="CLP")
    assert (await _buy(client, other, intent["id"])).status_code == 404
    assert (await client.delete(MARKET + "/providers/provider_b", headers=sandbox.headers)).status_code == 204
    assert (await client.get(MARKET, headers=sandbox.headers)).json() == {"items": []}
    assert (await client.delete(MARKET + "/providers/provider_b", headers=sandbox.headers)).status_code == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"approve": 0.0, "decline": 0.0, "give_up": 0.0, "pending": 0.0}, "are all 0"),
        ({"decline": -0.1, "approve": 1.0}, "decline"),
        ({"provider": "provider_z"}, "provider"),
        ({"pending": "0"}, "pending"),
        ({"extra": 1}, "extra"),
    ],
)
async def test_a_bad_market_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, sandbox: Sandbox, change: dict[str, object], field: str
) -> None:
    body = {"provider": "provider_a", "approve": 0.6, "decline": 0.3, "give_up": 0.05, "pending": 0.05}
    answer = await client.post(MARKET, json={**body, **change}, headers=sandbox.headers)
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    problem = error["details"]["errors"][0]
    assert problem["field"] == field or (field == "are all 0" and field in problem["message"]), error
    assert (await client.get(MARKET, headers=sandbox.headers)).json() == {"items": []}


async def test_the_market_is_for_sandbox_applications_only(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    live = await new_application(runtime, environment="PRODUCTION")
    body = {"provider": "provider_a", "approve": 1, "decline": 0, "give_up": 0, "pending": 0}
    answer = await client.post(MARKET, json=body, headers=live.headers)
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "FORBIDDEN"
    buy = await _buy(client, live, "pi_x")
    assert buy.status_code == 403


async def test_weights_not_adding_up_to_one_are_shares_and_the_document_says_not_all_zero(
    client: httpx.AsyncClient, sandbox: Sandbox
) -> None:
    # Any weights, not all 0: each outcome's chance is its share of their sum.
    body = {"provider": "provider_b", "approve": 1.0, "decline": 1.0, "give_up": 0.0, "pending": 0.0}
    answer = await client.post(MARKET, json=body, headers=sandbox.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {**body, "provider": "provider_b_redirect_get", "approve": 0.5, "decline": 0.5}
    schema = (await client.get("/openapi.json")).json()["components"]["schemas"]["MarketRequest"]
    assert schema["anyOf"] == [
        {"properties": {name: {"exclusiveMinimum": 0}}}
        for name in ("approve", "decline", "give_up", "pending")
    ]
