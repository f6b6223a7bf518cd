"""Routing drafts (SQLite and PostgreSQL): `POST .../routing/versions` saves a program as a draft
that changes no checkout, the dry run takes any version (a draft, an earlier one), activation is
its own step; and the checks refuse a metadata key no intent can have and a currency listed twice."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.runtime import Runtime
from tests.kit import assert_error, mock_sandbox
from tests.providers.helpers import B, start
from tests.routing.helpers import C, evaluate, put_routing, routing_url, save_rules

TO_C = {"name": "usd-to-c", "if": {"currency": ["USD"]}, "then": {"priority": [C]}}


async def new_version(
    client: httpx.AsyncClient, sandbox: Any, rules: list[dict[str, Any]], **fields: Any
) -> httpx.Response:
    body = {"default": "priority", "rules": rules, **fields}
    return await client.post(routing_url(sandbox, "/versions"), json=body, headers=sandbox.headers)


async def test_a_draft_changes_nothing_until_it_is_activated(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    drafted = await new_version(client, sandbox, [TO_C])
    assert drafted.status_code == 201, drafted.text
    draft = drafted.json()
    assert (draft["version"], draft["active"], draft["activated_at"]) == (1, False, None)
    assert draft["rules"] == [TO_C]
    # Nothing in force changed: no active version, and a USD checkout still goes by priority.
    assert (await client.get(routing_url(sandbox), headers=sandbox.headers)).json()["version"] is None
    _, started = await start(client, sandbox, currency="USD", amount=1000)
    assert started["provider"] == B and started["routing"]["version"] is None
    now = (await evaluate(client, sandbox, amount=1000, currency="USD")).json()
    assert now["provider"] == B and now["routing"]["strategy"] == "priority"
    # The dry run of the draft: what it would decide once active.
    tried = await evaluate(client, sandbox, amount=1000, currency="USD", version=1)
    assert tried.status_code == 200, tried.text
    assert tried.json()["provider"] == C
    assert (tried.json()["routing"]["rule"], tried.json()["routing"]["version"]) == ("usd-to-c", 1)

    activated = await client.post(routing_url(sandbox, "/versions/1/activate"), headers=sandbox.headers)
    assert activated.status_code == 200 and activated.json()["active"] is True
    _, started = await start(client, sandbox, currency="USD", amount=1000)
    assert started["provider"] == C and started["routing"]["version"] == 1


async def test_the_dry_run_of_an_earlier_version_and_of_none(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await save_rules(client, sandbox, TO_C)  # version 1, active
    to_b = {**TO_C, "name": "usd-to-b", "then": {"priority": [B]}}
    saved = await new_version(client, sandbox, [to_b], activate=True)  # version 2, active at once
    assert saved.status_code == 201 and saved.json()["active"] is True
    assert (await evaluate(client, sandbox, amount=1, currency="USD")).json()["provider"] == B
    earlier = (await evaluate(client, sandbox, amount=1, currency="USD", version=1)).json()
    assert earlier["provider"] == C and earlier["routing"]["version"] == 1
    missing = await evaluate(client, sandbox, amount=1, currency="USD", version=9)
    assert "No routing version 9" in assert_error(missing, 404, "RESOURCE_NOT_FOUND")["message"]
    for bad in (0, "1", 1.5, 10**10):
        assert_error(
            await evaluate(client, sandbox, amount=1, currency="USD", version=bad), 400, "VALIDATION_ERROR"
        )
    listed = (await client.get(routing_url(sandbox, "/versions"), headers=sandbox.headers)).json()
    assert [(v["version"], v["active"]) for v in listed["items"]] == [(2, True), (1, False)]


async def test_a_draft_is_checked_as_a_saved_version_is(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    to_nowhere = {"name": "x", "if": {}, "then": {"priority": ["provider_z"]}}
    refused = await new_version(client, sandbox, [to_nowhere])
    assert "provider_z is not a provider" in str(assert_error(refused, 400, "VALIDATION_ERROR")["details"])
    extra = await new_version(client, sandbox, [], activate="yes")
    assert_error(extra, 400, "VALIDATION_ERROR")
    listed = (await client.get(routing_url(sandbox, "/versions"), headers=sandbox.headers)).json()
    assert listed["items"] == []


@pytest.mark.parametrize(
    ("condition", "field", "said"),
    [
        ({"metadata": {"": "app"}}, "if.metadata", "metadata key 1 is 0 characters"),
        (
            {"metadata": {"channel": "app", "k" * 30_000: "x"}},
            "if.metadata",
            "metadata key 2 is 30000 characters",
        ),
        ({"metadata": {"k" * 41: "x"}}, "if.metadata", "keys are 1 to 40: no intent can match it"),
        ({"currency": ["USD", "CLP", "USD"]}, "if.currency", "USD is listed twice: list each currency once"),
    ],
)
async def test_a_condition_no_intent_can_meet_or_a_currency_twice_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, condition: dict[str, Any], field: str, said: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    rule = {"name": "odd", "if": {"currency": ["USD"], **condition}, "then": {"priority": [B]}}
    for answer in (
        await put_routing(client, sandbox, {"rules": [rule]}),
        await new_version(client, sandbox, [rule]),
    ):
        error = assert_error(answer, 400, "VALIDATION_ERROR")
        [entry] = error["details"]["errors"]
        assert entry["field"] == f"rules[0].{field}" and entry["rule_name"] == "odd", entry
        assert said in entry["message"] and entry["message"].startswith('rule 0 "odd": '), entry
        assert len(answer.text) < 2_000  # the 30,000-character key is not echoed back
    listed = (await client.get(routing_url(sandbox, "/versions"), headers=sandbox.headers)).json()
    assert listed["items"] == []
    # The same rule with a key an intent can have is saved.
    fine = {**rule, "if": {"currency": ["USD"], "metadata": {"k" * 40: "x"}}}
    assert (await put_routing(client, sandbox, {"rules": [fine]})).status_code == 200
