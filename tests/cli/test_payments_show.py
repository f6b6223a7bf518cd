"""`payorch payments show <intent id>` as a real process, on SQLite and PostgreSQL: a sandbox
payment paid at the simulator's page and partly refunded over HTTP, then shown with its payment,
refund and timeline; an intent without a payment; an unknown id is one line. Also `connectors
remove` of the connector that took the payment: refused (disable it instead), nothing removed."""

from __future__ import annotations

import json

import httpx
import pytest

from payorch.runtime import Runtime
from tests.cli.helpers import refused
from tests.kit import mock_sandbox
from tests.live import payorch_env, run_cli
from tests.providers.helpers import A, create_intent, pay, read, start

pytestmark = pytest.mark.slow


async def test_show_prints_the_intent_its_payment_refunds_and_timeline(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    intent, checkout = await start(client, sandbox, A, amount=1500)
    assert (await pay(client, checkout, "approve")).left_to is not None
    payment_id = (await read(client, sandbox, intent["id"]))["payment"]["id"]
    refund = await client.post(
        f"/v1/payments/{payment_id}/refunds",
        json={"amount": 500},
        headers={**sandbox.headers, "Idempotency-Key": "cli-r-1"},
    )
    assert refund.status_code == 201, refund.text
    env = payorch_env(database_url)

    done = run_cli(["payments", "show", intent["id"], "--json"], env)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["id"] == intent["id"] and shown["status"] == "PARTIALLY_REFUNDED"
    assert shown["payment"]["id"] == payment_id and shown["payment"]["refunded_amount"] == 500
    assert [(r["refund_id"], r["amount"], r["status"]) for r in shown["refunds"]] == [
        (refund.json()["refund_id"], 500, "SUCCEEDED")
    ]
    api = await read(client, sandbox, intent["id"])
    assert shown["timeline"] == api["timeline"] and len(shown["timeline"]) >= 3

    text = run_cli(["payments", "show", intent["id"]], env)
    assert text.returncode == 0, text.stderr
    assert f"payment: {payment_id} PARTIALLY_REFUNDED" in text.stdout
    assert f"refund: {refund.json()['refund_id']} SUCCEEDED 500 CLP" in text.stdout
    for entry in api["timeline"]:
        assert f"{entry['at']}  {entry['type']}" in text.stdout

    # The connector that took this payment cannot be removed: its refunds still use it.
    listed = json.loads(
        run_cli(["connectors", "list", "--merchant", sandbox.merchant_account_id, "--json"], env).stdout
    )
    [used] = [item["id"] for item in listed["items"] if item["provider"] == A]
    refused(
        run_cli(["connectors", "remove", used, "--merchant", sandbox.merchant_account_id], env),
        used,
        "disable it",
    )
    again = json.loads(
        run_cli(["connectors", "list", "--merchant", sandbox.merchant_account_id, "--json"], env).stdout
    )
    assert again == listed


async def test_an_intent_without_payment_and_an_unknown_id(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    created = await create_intent(client, sandbox)
    env = payorch_env(database_url)
    done = run_cli(["payments", "show", created["id"], "--json"], env)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["status"] == "CREATED" and "payment" not in shown
    assert shown["refunds"] == [] and [t["type"] for t in shown["timeline"]] == ["payment_intent.created"]
    text = run_cli(["payments", "show", created["id"]], env)
    assert "payment: - (none" in text.stdout
    refused(run_cli(["payments", "show", "payi_nope"], env), "payi_nope")
