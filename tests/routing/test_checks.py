"""Rules are checked before they are saved: each refusal is 400 VALIDATION_ERROR naming the rule
(index and name), the field and the reason, and nothing is saved (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from payorch.runtime import Runtime
from tests.kit import mock_sandbox, new_application
from tests.providers.helpers import A, B
from tests.routing.helpers import C, put_routing, routing_url

CLP = {"currency": ["CLP"]}
EVERYTHING: dict[str, Any] = {}

# (rules, the refused rule's index, its field, words of the reason)
REFUSALS = [
    pytest.param(
        [
            {"name": "all", "if": EVERYTHING, "then": {"priority": [B]}},
            {"name": "usd", "if": {"currency": ["USD"]}, "then": {"priority": [C]}},
        ],
        1,
        "rules[1].if",
        'rule 0 "all" comes first and matches every intent this one matches',
        id="unreachable-after-empty-if",
    ),
    pytest.param(
        [
            {
                "name": "big",
                "if": {"currency": ["USD", "BRL"], "amount": {"gte": 100}},
                "then": {"priority": [B]},
            },
            {
                "name": "bigger",
                "if": {"currency": ["USD"], "amount": {"gte": 1000, "lt": 5000}, "metadata": {"k": "v"}},
                "then": {"priority": [C]},
            },
        ],
        1,
        "rules[1].if",
        "no intent can reach it",
        id="unreachable-narrower",
    ),
    pytest.param(
        [{"name": "empty", "if": {"currency": []}, "then": {"priority": [B]}}],
        0,
        "rules[0].if.currency",
        "an empty currency list matches no intent",
        id="empty-currency-list",
    ),
    pytest.param(
        [
            {
                "name": "backwards",
                "if": {"currency": ["USD"], "amount": {"gte": 500, "lt": 500}},
                "then": {"priority": [B]},
            }
        ],
        0,
        "rules[0].if.amount",
        "amount.gte 500 is not below amount.lt 500",
        id="gte-not-below-lt",
    ),
    pytest.param(
        [{"name": "a-usd", "if": {"currency": ["USD"]}, "then": {"priority": [A]}}],
        0,
        "rules[0].then.priority[0]",
        f"{A} cannot charge USD",
        id="provider-cannot-charge",
    ),
    pytest.param(
        [{"name": "a-anything", "if": EVERYTHING, "then": {"priority": [B]}}],
        0,
        "rules[0].then.priority[0]",
        f"{B} cannot charge EUR",
        id="no-currency-condition-checks-what-the-merchant-takes",
    ),
    pytest.param(
        [
            {
                "name": "bad-sum",
                "if": CLP,
                "then": {"split": [{"provider": A, "weight": 70}, {"provider": B, "weight": 20}]},
            }
        ],
        0,
        "rules[0].then.split",
        "the weights add up to 90, not 100",
        id="weights-not-100",
    ),
    pytest.param(
        [
            {
                "name": "halves",
                "if": CLP,
                "then": {"split": [{"provider": A, "weight": 70.5}, {"provider": B, "weight": 29.5}]},
            }
        ],
        0,
        "rules[0].then.split[0].weight",
        "weight 70.5 is not a whole percentage",
        id="weights-not-whole",
    ),
    pytest.param(
        [{"name": "twice", "if": CLP, "then": {"priority": [A, A]}}],
        0,
        "rules[0].then.priority[1]",
        f"{A} is named twice",
        id="provider-twice",
    ),
    pytest.param(
        [
            {"name": "same", "if": CLP, "then": {"priority": [A]}},
            {"name": "same", "if": {"currency": ["USD"]}, "then": {"priority": [B]}},
        ],
        1,
        "rules[1].name",
        "already used by rule 0",
        id="duplicate-name",
    ),
]


@pytest.mark.parametrize(("rules", "index", "field", "reason"), REFUSALS)
async def test_refused_naming_the_rule_and_nothing_saved(
    client: httpx.AsyncClient,
    runtime: Runtime,
    rules: list[dict[str, Any]],
    index: int,
    field: str,
    reason: str,
) -> None:
    sandbox = await mock_sandbox(runtime)
    response = await put_routing(client, sandbox, {"default": "priority", "rules": rules})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR" and error["request_id"]
    (problem,) = [e for e in error["details"]["errors"] if e["field"] == field]
    assert problem["rule_index"] == index and problem["rule_name"] == rules[index]["name"]
    assert problem["message"].startswith(f'rule {index} "{rules[index]["name"]}": ')
    assert reason in problem["message"], problem["message"]
    read = await client.get(routing_url(sandbox), headers=sandbox.headers)
    assert read.status_code == 200 and read.json()["version"] is None
    listed = await client.get(routing_url(sandbox, "/versions"), headers=sandbox.headers)
    assert listed.json() == {"items": [], "next_cursor": None}


async def test_a_provider_not_enabled_is_refused(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await new_application(runtime)
    url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    assert (
        await client.post(url, json={"provider": B, "mode": "MOCK"}, headers=sandbox.headers)
    ).status_code == 201
    disabled = {"provider": A, "mode": "MOCK", "enabled": False}
    assert (await client.post(url, json=disabled, headers=sandbox.headers)).status_code == 201
    rules = [{"name": "clp", "if": CLP, "then": {"priority": [B, A, C]}}]
    response = await put_routing(client, sandbox, {"rules": rules})
    assert response.status_code == 400, response.text
    messages = {e["field"]: e["message"] for e in response.json()["error"]["details"]["errors"]}
    assert messages == {
        "rules[0].then.priority[1]": f'rule 0 "clp": {A} is not enabled for this merchant',
        "rules[0].then.priority[2]": f'rule 0 "clp": {C} is not enabled for this merchant',
    }


async def test_more_than_50_rules_is_refused(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    rules = [
        {
            "name": f"r{i}",
            "if": {"currency": ["CLP"], "amount": {"gte": i, "lt": i + 1}},
            "then": {"priority": [A]},
        }
        for i in range(51)
    ]
    response = await put_routing(client, sandbox, {"rules": rules})
    assert response.status_code == 400
    assert response.json()["error"]["details"]["errors"][0]["field"] == "rules"
    assert (await put_routing(client, sandbox, {"rules": rules[:50]})).status_code == 200
