"""`payorch payments capture` and `payments void` (in process; one capture as the real program), on
SQLite and PostgreSQL, on holds made at provider C's simulator through the API: part of one captured with the amount typed
as people type it (the rest released, the provider's books and the activity log say so), another
voided, and each refusal one line on stderr with exit status 1 that changes nothing (an amount
that is not one, more than is held, a payment no longer held, an unknown id, an intent's id)."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest

from payorch.runtime import Runtime
from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.holding import held_payment
from tests.kit import mock_sandbox
from tests.live import payorch_env
from tests.live import run_cli as run_cli_once

pytestmark = pytest.mark.slow


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A capture or void builds the app to call the provider: more than a minute at load 20."""
    return run_cli_once(args, env, timeout=240)


async def test_capture_part_then_void_another(
    client: httpx.AsyncClient, runtime: Runtime, database_url: str
) -> None:
    app = await mock_sandbox(runtime)
    held = await held_payment(client, app, reference="cli-held-1")  # USD 1,500.00
    other = await held_payment(client, app, amount=20_000, currency="CLP", reference="cli-held-2")
    env = payorch_env(database_url)

    refused(
        cli(["payments", "capture", held.payment_id, "--amount", "10,50"], env),
        "only separates thousands",
    )
    refused(
        cli(["payments", "capture", held.payment_id, "--amount", "1,500.01"], env),
        "$1,500.01 is more than is held. At most $1,500.00 can be captured",
    )
    refused(cli(["payments", "capture", "pay_nothing"], env), "No payment pay_nothing")
    refused(cli(["payments", "void", held.intent_id], env), "is a payment intent id")
    shown = await client.get(f"/v1/payments/{held.payment_id}", headers=app.headers)
    assert shown.json()["status"] == "REQUIRES_CAPTURE"  # nothing moved

    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    done = run_cli(["payments", "capture", held.payment_id, "--amount", "1,000.50"], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"payorch: captured $1,000.50 of {held.payment_id} ($499.50 released to the buyer); "
        f"intent {held.intent_id} is AUTHORIZED\n"
    )
    again = cli(["payments", "capture", held.payment_id], env)
    refused(again, "Only a held payment can be captured")

    voided = cli(["payments", "void", other.payment_id, "--json"], env)
    assert voided.returncode == 0, voided.stderr
    body = json.loads(voided.stdout)
    assert (body["id"], body["status"], body["amount_released"]) == (other.payment_id, "VOIDED", 20_000)

    paid = (await client.get(f"/v1/payments/{held.payment_id}", headers=app.headers)).json()
    assert (paid["status"], paid["amount_captured"], paid["amount_released"]) == (
        "AUTHORIZED",
        100_050,
        49_950,
    )
    intent = (await client.get(f"/v1/payment-intents/{other.intent_id}", headers=app.headers)).json()
    assert intent["status"] == "CANCELLED"
    log = await client.get("/v1/admin/activity", headers=app.headers)
    moves = [(e["action"], e["actor"]["type"], e["resource"]["id"]) for e in log.json()["items"]]
    assert ("payment.capture_requested", "system", held.payment_id) in moves, moves
    assert ("payment.void_requested", "system", other.payment_id) in moves, moves
