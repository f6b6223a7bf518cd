"""`payorch webhooks retry <delivery id>` (in process; once as the real program), on SQLite and
PostgreSQL: a pending delivery gets a new schedule due now (as the API's retry), a succeeded one is
refused with one line (the API's 409 WEBHOOK_DELIVERY_ALREADY_SUCCEEDED), an unknown id is one line."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from tests.cli.helpers import refused
from tests.cli_in_process import cli
from tests.live import payorch_env, run_cli
from tests.webhooks.helpers import Hooks, deliveries_of

pytestmark = pytest.mark.slow


async def test_retry_reschedules_a_delivery_and_refuses_a_succeeded_one(
    database_url: str, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    env = payorch_env(database_url)
    delivered, _ = await hooks.queued("/ok", "order-cli-1")
    assert await deliveries.run_until_idle(runtime) == 1
    [succeeded] = await deliveries_of(client, sandbox, delivered)
    assert succeeded["status"] == "SUCCEEDED"
    refused(cli(["webhooks", "retry", succeeded["id"]], env), "already succeeded")
    assert await deliveries_of(client, sandbox, delivered) == [succeeded]  # unchanged

    failing, _ = await hooks.queued("/status/503", "order-cli-2")
    assert await deliveries.run_until_idle(runtime) == 2  # to both endpoints
    [failed] = await deliveries_of(client, sandbox, failing)
    assert failed["status"] == "PENDING" and failed["attempts"] == 1
    before = datetime.now(UTC)
    # The real program, once for this command family (the rest run in process: tests/cli_in_process.py).
    done = run_cli(["webhooks", "retry", failed["id"], "--json"], env)
    assert done.returncode == 0, done.stderr
    retried = json.loads(done.stdout)
    assert retried["id"] == failed["id"] and retried["status"] == "PENDING"
    assert retried["attempts"] == 1  # history kept
    # Due now (the command's clock), no longer at the failed attempt's backoff.
    due = datetime.fromisoformat(retried["next_attempt_at"].replace("Z", "+00:00"))
    assert before <= due <= datetime.now(UTC) and retried["next_attempt_at"] != failed["next_attempt_at"]
    [read] = await deliveries_of(client, sandbox, failing)
    assert read == retried
    text = cli(["webhooks", "retry", failed["id"]], env)
    assert text.returncode == 0 and failed["id"] in text.stdout and "PENDING" in text.stdout
    refused(cli(["webhooks", "retry", "whd_nope"], env), "whd_nope")
