"""Routing versions: each replacement is a new active version, the list is paged newest first,
an earlier version can be activated again (checked again first), and the dry run decides
without writing anything (SQLite and PostgreSQL)."""

from __future__ import annotations

import httpx
from sqlalchemy import func, select

from payorch.db.tables import events, payment_intents
from payorch.db.tables.routing import routing_versions
from payorch.runtime import Runtime
from tests.kit import create_intent, mock_sandbox
from tests.providers.helpers import A, B, checkout, set_fault
from tests.routing.helpers import C, evaluate, routing_url, save_rules, split_pick

TO_C = {"name": "to-c", "if": {"currency": ["USD"]}, "then": {"priority": [C]}}
TO_B = {"name": "to-b", "if": {"currency": ["USD"]}, "then": {"priority": [B]}}


async def test_versions_list_and_activate(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    first = await save_rules(client, sandbox, TO_C)
    second = await save_rules(client, sandbox, TO_B, default="success_rate")
    assert (first["version"], second["version"]) == (1, 2)
    assert second["rules"] == [TO_B] and second["default"] == "success_rate"
    current = (await client.get(routing_url(sandbox), headers=sandbox.headers)).json()
    assert current["version"] == 2 and current["active"] is True and current["rules"] == [TO_B]
    for _ in range(3):
        await save_rules(client, sandbox, TO_C)
    page = (await client.get(routing_url(sandbox, "/versions?limit=2"), headers=sandbox.headers)).json()
    assert [v["version"] for v in page["items"]] == [5, 4] and page["next_cursor"] == "4"
    assert [v["active"] for v in page["items"]] == [True, False]
    rest = await client.get(routing_url(sandbox, "/versions?limit=2&cursor=4"), headers=sandbox.headers)
    assert [v["version"] for v in rest.json()["items"]] == [3, 2]
    last = await client.get(routing_url(sandbox, "/versions?limit=2&cursor=2"), headers=sandbox.headers)
    assert [v["version"] for v in last.json()["items"]] == [1] and last.json()["next_cursor"] is None

    activated = await client.post(routing_url(sandbox, "/versions/2/activate"), headers=sandbox.headers)
    assert activated.status_code == 200, activated.text
    assert activated.json()["version"] == 2 and activated.json()["active"] is True
    decided = await evaluate(client, sandbox, amount=1000, currency="USD")
    assert decided.json()["provider"] == B and decided.json()["routing"]["version"] == 2
    listed = (await client.get(routing_url(sandbox, "/versions"), headers=sandbox.headers)).json()
    assert [v["version"] for v in listed["items"] if v["active"]] == [2]

    missing = await client.post(routing_url(sandbox, "/versions/9/activate"), headers=sandbox.headers)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "RESOURCE_NOT_FOUND"


async def test_activating_a_version_that_no_longer_passes_is_refused(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await save_rules(client, sandbox, TO_C)
    await save_rules(client, sandbox, TO_B)
    connectors = (
        await client.get(
            f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors", headers=sandbox.headers
        )
    ).json()["items"]
    c_id = next(c["id"] for c in connectors if c["provider"] == C)
    patch_url = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors/{c_id}"
    assert (
        await client.patch(patch_url, json={"enabled": False}, headers=sandbox.headers)
    ).status_code == 200
    refused = await client.post(routing_url(sandbox, "/versions/1/activate"), headers=sandbox.headers)
    assert refused.status_code == 400
    assert (
        refused.json()["error"]["details"]["errors"][0]["message"]
        == f'rule 0 "to-c": {C} is not enabled for this merchant'
    )
    assert (await client.get(routing_url(sandbox), headers=sandbox.headers)).json()["version"] == 2


async def test_another_merchant_is_404(client: httpx.AsyncClient, runtime: Runtime) -> None:
    mine = await mock_sandbox(runtime)
    theirs = await mock_sandbox(runtime)
    url = f"/v1/admin/merchant-accounts/{theirs.merchant_account_id}/routing"
    for method, path, body in (
        ("GET", "", None),
        ("PUT", "", {"rules": []}),
        ("GET", "/versions", None),
        ("POST", "/versions/1/activate", None),
        ("POST", "/evaluate", {"amount": 1, "currency": "CLP"}),
    ):
        response = await client.request(method, url + path, json=body, headers=mine.headers)
        assert response.status_code == 404, (method, path, response.text)


async def test_the_dry_run_decides_and_writes_nothing(client: httpx.AsyncClient, runtime: Runtime) -> None:
    sandbox = await mock_sandbox(runtime)
    split = {"split": [{"provider": A, "weight": 70}, {"provider": B, "weight": 30}]}
    await save_rules(
        client,
        sandbox,
        {
            "name": "app",
            "if": {"currency": ["USD"], "metadata": {"channel": "app"}},
            "then": {"priority": [C, B]},
        },
        {"name": "spread", "if": {"currency": ["CLP"]}, "then": split},
    )

    async def written() -> tuple[int, ...]:
        async with runtime.database.transaction() as conn:
            return tuple(
                [
                    (await conn.execute(select(func.count()).select_from(table))).scalar_one()
                    for table in (payment_intents, events, routing_versions)
                ]
            )

    before = await written()
    app = await evaluate(client, sandbox, amount=100, currency="USD", metadata={"channel": "app"})
    assert app.status_code == 200, app.text
    assert app.json()["provider"] == C
    assert (app.json()["routing"]["rule"], app.json()["routing"]["strategy"]) == ("app", "rule")
    for intent_id in ("payi_one", "payi_two", "payi_three"):
        spread = await evaluate(client, sandbox, amount=100, currency="CLP", payment_intent_id=intent_id)
        assert spread.json()["provider"] == (A if split_pick(intent_id, 70) else B)
    explicit = await evaluate(client, sandbox, amount=100, currency="USD", provider=B)
    assert explicit.json()["routing"]["strategy"] == "explicit" and explicit.json()["provider"] == B
    unsupported = await evaluate(client, sandbox, amount=100, currency="USD", provider=A)
    assert unsupported.status_code == 422 and unsupported.json()["error"]["code"] == "CURRENCY_NOT_SUPPORTED"
    bad = await evaluate(client, sandbox, amount=0, currency="usd")
    assert bad.status_code == 400
    assert sorted(e["field"] for e in bad.json()["error"]["details"]["errors"]) == ["amount", "currency"]
    assert await written() == before


async def test_the_dry_run_reports_a_skipped_provider_without_a_trial(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    sandbox = await mock_sandbox(runtime)
    await set_fault(client, sandbox, A, "error")
    for _ in range(3):  # the default threshold: A is skipped from now on
        created = await create_intent(
            client, sandbox, external_reference="o", amount=100, return_url="https://shop.example/r"
        )
        answer = await checkout(client, sandbox, created["id"])
        assert answer.json()["provider"] == B
    decided = (await evaluate(client, sandbox, amount=100, currency="CLP")).json()
    assert decided["provider"] == B
    (skipped,) = decided["routing"]["skipped"]
    assert skipped["provider"] == A and skipped["reason"] == "unavailable"
