"""`payorch payments show` (in process; once as the real program), on SQLite and PostgreSQL: a
sandbox payment paid at the simulator's page and partly refunded over HTTP, then shown with its
payment, refund, routing and timeline, amounts as people read them; a declined one with its reason;
a PROCESSING one with what it waits for; an intent without a payment; an unknown id is one line; an
intent found by its external reference (one shown, several listed, narrowed by --merchant). Also
`connectors remove` of the connector that took the payment: refused (disable it instead)."""

from __future__ import annotations

import json

import httpx
import pytest

from payorch.runtime import Runtime
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.kit import mock_sandbox
from tests.live import payorch_env, run_cli
from tests.providers.helpers import A, B, create_intent, pay, read, start

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

    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
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

    text = cli(["payments", "show", intent["id"]], env)
    assert text.returncode == 0, text.stderr
    assert f"payment: {payment_id} PARTIALLY_REFUNDED" in text.stdout
    assert "refunded CLP 500" in text.stdout and "amount: CLP 1,500\n" in text.stdout
    assert f"refund: {refund.json()['refund_id']} SUCCEEDED CLP 500\n" in text.stdout
    assert f"routing: {A} (strategy explicit" in text.stdout, text.stdout
    for entry in api["timeline"]:
        assert f"{entry['at']}  {entry['type']}" in text.stdout

    # The connector that took this payment cannot be removed: its refunds still use it.
    listed = json.loads(
        cli(["connectors", "list", "--merchant", sandbox.merchant_account_id, "--json"], env).stdout
    )
    [used] = [item["id"] for item in listed["items"] if item["provider"] == A]
    refused(
        cli(["connectors", "remove", used, "--merchant", sandbox.merchant_account_id], env),
        used,
        "disable it",
    )
    again = json.loads(
        cli(["connectors", "list", "--merchant", sandbox.merchant_account_id, "--json"], env).stdout
    )
    assert again == listed


async def test_an_intent_without_payment_and_an_unknown_id(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    created = await create_intent(client, sandbox)
    env = payorch_env(database_url)
    done = cli(["payments", "show", created["id"], "--json"], env)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["status"] == "CREATED" and "payment" not in shown
    assert shown["refunds"] == [] and [t["type"] for t in shown["timeline"]] == ["payment_intent.created"]
    text = cli(["payments", "show", created["id"]], env)
    assert "payment: - (none" in text.stdout
    refused(cli(["payments", "show", "payi_nope"], env), "payi_nope")


async def test_a_declined_and_a_processing_intent_say_why_and_what_they_wait_for(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    env = payorch_env(database_url)
    declined, checkout = await start(
        client, sandbox, A, external_reference=f"no-{sandbox.merchant_account_id}"
    )
    await pay(client, checkout, "reject")
    error = (await read(client, sandbox, declined["id"]))["last_payment_error"]
    text = cli(["payments", "show", declined["id"]], env)
    assert text.returncode == 0, text.stderr
    assert "status: FAILED" in text.stdout
    assert f"last payment error: {error['code']}: {error['message']}" in text.stdout, text.stdout

    waiting, checkout = await start(
        client,
        sandbox,
        B,
        amount=1050,
        currency="USD",
        external_reference=f"wait-{sandbox.merchant_account_id}",
    )
    await pay(client, checkout, "pending")
    processing = (await read(client, sandbox, waiting["id"]))["processing"]
    text = cli(["payments", "show", waiting["id"]], env)
    assert "status: PROCESSING" in text.stdout and "amount: $10.50\n" in text.stdout, text.stdout
    assert (
        f"processing: waiting for {B} to confirm the payment; next check at {processing['next_check_at']}"
        in text.stdout
    ), text.stdout
    assert f"routing: {B} (strategy explicit" in text.stdout


async def test_an_intent_is_found_by_its_external_reference(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    sandbox = await mock_sandbox(runtime)
    env = payorch_env(database_url)
    shared, alone = f"twice-{sandbox.merchant_account_id}", f"once-{sandbox.merchant_account_id}"
    first = await create_intent(client, sandbox, external_reference=shared)
    second = await create_intent(client, sandbox, external_reference=shared, amount=2500)
    only = await create_intent(client, sandbox, external_reference=alone)

    one = cli(["payments", "show", "--external-reference", alone], env)
    assert one.returncode == 0, one.stderr
    assert f"id: {only['id']}\n" in one.stdout and "timeline:" in one.stdout
    as_json = json.loads(cli(["payments", "show", "--external-reference", alone, "--json"], env).stdout)
    assert as_json["id"] == only["id"] and as_json["refunds"] == []

    several = cli(["payments", "show", "--external-reference", shared], env)
    assert several.returncode == 0, several.stderr
    lines = several.stdout.splitlines()
    assert lines[0].startswith(f"payorch: 2 payment intents have external reference {shared}")
    assert [line.split()[0] for line in lines[1:]] == [second["id"], first["id"]]  # newest first
    assert "CLP 2,500" in lines[1] and sandbox.merchant_account_id in lines[1]
    listed = json.loads(
        cli(
            [
                "payments",
                "show",
                "--external-reference",
                shared,
                "--merchant",
                sandbox.merchant_account_id,
                "--json",
            ],
            env,
        ).stdout
    )
    assert [item["id"] for item in listed["items"]] == [second["id"], first["id"]]

    refused(
        cli(["payments", "show", "--external-reference", "nobody-has-this-ref"], env),
        "nobody-has-this-ref",
    )
    refused(
        cli(["payments", "show", "--external-reference", alone, "--merchant", "mrc_nope"], env),
        "mrc_nope",
    )
    refused(cli(["payments", "show"], env), "--external-reference", status=2)
    refused(
        cli(["payments", "show", only["id"], "--external-reference", alone], env), "one of them", status=2
    )
