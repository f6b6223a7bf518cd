"""Each kind of rule decides an ``auto`` checkout, and the decision is explained: ``routing`` in
the checkout response, on the intent and in payment.checkout.started (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx

from payorch.providers.registry import REGISTRATIONS
from payorch.runtime import Runtime
from tests.kit import Sandbox, mock_sandbox
from tests.providers.helpers import A, B, checkout, create_intent, read, set_fault
from tests.routing.helpers import C, save_rules, split_pick


async def routed(client: httpx.AsyncClient, sandbox: Sandbox, **intent: Any) -> dict[str, Any]:
    created = await create_intent(client, sandbox, **intent)
    response = await checkout(client, sandbox, created["id"])
    assert response.status_code == 200, response.text
    return dict(response.json())


async def started_event(client: httpx.AsyncClient, sandbox: Sandbox, intent_id: str) -> dict[str, Any]:
    response = await client.get(
        "/v1/events", params={"payment_intent_id": intent_id}, headers=sandbox.headers
    )
    assert response.status_code == 200, response.text
    (event,) = [e for e in response.json()["items"] if e["type"] == "payment.checkout.started"]
    return dict(event["data"])


async def test_without_rules_priority_decides_and_says_so(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    body = await routed(client, sandbox)
    assert body["provider"] == A
    routing = body["routing"]
    assert routing["strategy"] == "priority" and routing["rule"] is None and routing["version"] is None
    by_priority = sorted(REGISTRATIONS, key=lambda r: r.mock_priority)  # mock_sandbox's connectors
    assert [c["provider"] for c in routing["candidates"]] == [r.provider_id for r in by_priority]
    assert [c["priority"] for c in routing["candidates"]] == [r.mock_priority for r in by_priority]
    assert routing["chosen"] == A and routing["skipped"] == []
    intent = await read(client, sandbox, body["payment_intent_id"])
    # The intent's record also lists its attempts (docs/routing.md); the checkout's carries none.
    decided = {k: v for k, v in routing.items() if k != "attempts"}
    assert (
        routing["attempts"] == []
        and {k: v for k, v in intent["routing"].items() if k != "attempts"} == decided
    )
    assert [(a["attempt"], a["provider"], a["result"]) for a in intent["routing"]["attempts"]] == [
        (1, A, None)
    ]
    event = await started_event(client, sandbox, body["payment_intent_id"])
    assert event["provider"] == A and event["routing"] == decided


async def test_a_priority_rule_on_currency_amount_and_metadata(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    rule: dict[str, Any] = {
        "name": "app-usd",
        "if": {"currency": ["USD"], "amount": {"gte": 1000, "lt": 500000}, "metadata": {"channel": "app"}},
        "then": {"priority": [C, B]},
    }
    saved = await save_rules(client, sandbox, rule)
    assert saved["version"] == 1 and saved["active"] is True
    body = await routed(client, sandbox, amount=2000, currency="USD", metadata={"channel": "app"})
    assert body["provider"] == C
    routing = body["routing"]
    assert (routing["strategy"], routing["rule"], routing["version"]) == ("rule", "app-usd", 1)
    assert [c["provider"] for c in routing["candidates"]] == rule["then"]["priority"]
    assert routing["skipped"] == [{"provider": A, "reason": "currency", "detail": "cannot charge USD"}]
    # Each condition must hold: another channel, an amount out of range -> the default (priority).
    for intent in (
        {"amount": 2000, "currency": "USD", "metadata": {"channel": "web"}},
        {"amount": 500000, "currency": "USD", "metadata": {"channel": "app"}},
        {"amount": 999, "currency": "USD", "metadata": {"channel": "app"}},
    ):
        other = await routed(client, sandbox, **intent)
        assert other["provider"] == B, intent
        assert (other["routing"]["strategy"], other["routing"]["rule"]) == ("priority", None)
        assert other["routing"]["version"] == 1


async def test_a_rule_fails_over_within_its_list(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    await save_rules(
        client, sandbox, {"name": "c-first", "if": {"currency": ["USD"]}, "then": {"priority": [C, B]}}
    )
    await set_fault(client, sandbox, C, "error")
    body = await routed(client, sandbox, amount=1000, currency="USD")
    assert body["provider"] == B
    skipped = body["routing"]["skipped"]
    assert [s["provider"] for s in skipped if s["reason"] == "down"] == [C]
    assert body["routing"]["chosen"] == B


async def test_a_split_is_weighted_by_the_intent_id_and_kept_on_retry(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    split = {"split": [{"provider": A, "weight": 70}, {"provider": B, "weight": 30}]}
    await save_rules(client, sandbox, {"name": "spread", "if": {"currency": ["CLP"]}, "then": split})
    for _ in range(8):
        created = await create_intent(client, sandbox)
        expected = A if split_pick(created["id"], 70) else B
        first = await checkout(client, sandbox, created["id"])
        assert first.status_code == 200, first.text
        routing = first.json()["routing"]
        assert first.json()["provider"] == expected
        assert (routing["strategy"], routing["rule"]) == ("split", "spread")
        assert {c["provider"]: c["weight"] for c in routing["candidates"]} == {A: 70, B: 30}
        assert routing["candidates"][0]["provider"] == expected  # the pick first, the rest for failover
        # A second checkout request replaces the first and picks the same provider.
        again = await checkout(client, sandbox, created["id"])
        assert again.status_code == 200 and again.json()["provider"] == expected


async def test_an_explicit_provider_is_still_used_and_recorded(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await save_rules(
        client, sandbox, {"name": "all-c", "if": {"currency": ["CLP"]}, "then": {"priority": [C]}}
    )
    created = await create_intent(client, sandbox, provider=B)
    response = await checkout(client, sandbox, created["id"])
    assert response.status_code == 200 and response.json()["provider"] == B
    routing = response.json()["routing"]
    assert (routing["strategy"], routing["rule"], routing["chosen"]) == ("explicit", None, B)


async def test_success_rate_default_without_rates_keeps_priority_and_says_so(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await save_rules(client, sandbox, default="success_rate")
    body = await routed(client, sandbox, amount=1000, currency="USD")
    routing = body["routing"]
    assert routing["strategy"] == "success_rate" and routing["version"] == 1
    if routing["fallback"] is not None:  # no rates to rank by: priority
        assert routing["fallback"] == "priority" and body["provider"] == B
