"""The dashboard's intent page shows the routing record of its checkout: chosen provider,
strategy, rule, version, candidates with weights, skipped ones and why (SQLite, PostgreSQL)."""

from __future__ import annotations

import httpx

from payorch.runtime import Runtime
from tests.dashboard.signing import sign_in
from tests.kit import mock_sandbox
from tests.providers.helpers import A, B, checkout, create_intent, set_fault
from tests.routing.helpers import save_rules, section, split_pick


async def test_the_intent_page_explains_the_routing(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    await sign_in(client, sandbox)
    split = {"split": [{"provider": A, "weight": 70}, {"provider": B, "weight": 30}]}
    await save_rules(client, sandbox, {"name": "spread", "if": {"currency": ["CLP"]}, "then": split})
    await set_fault(client, sandbox, A, "error")
    intent = await create_intent(client, sandbox)
    while not split_pick(intent["id"], 70):  # an intent the split sends to A, which is down
        intent = await create_intent(client, sandbox)
    before = await client.get(f"/dashboard/payments/{intent['id']}")
    assert before.status_code == 200 and 'id="routing"' not in before.text  # no checkout yet
    answer = await checkout(client, sandbox, intent["id"])
    assert answer.status_code == 200 and answer.json()["provider"] == B  # A is down: failover
    text = section((await client.get(f"/dashboard/payments/{intent['id']}")).text)
    assert f"Chosen {B}" in text
    assert "Strategy split" in text and "Rule spread" in text and "Version 1" in text
    assert f"{A} 1 70 %" in text and f"{B} 2 30 %" in text
    assert f"{A} skipped (down): {A} is down (" in text
