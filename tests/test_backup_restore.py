"""The backup drill of docs/deployment.md ("Backups and restore") on PostgreSQL, end to end:
`payorch serve` (with its worker) takes payments and sends webhooks; while payments run,
`pg_dump --format=custom` is taken; it is restored with `pg_restore` into a new database and
payorch is started on it with the same PAYORCH_SECRET_KEY. Every intent, payment and refund
answered before the dump began is there as it was, the activity log verifies to the same head,
the deliveries still pending in the dump are delivered (signed with the endpoint's secret, so it
decrypted), idempotency keys answer the same intents, no intent is paid twice, and a new payment
works. Started with another key, the restored database is refused with one line naming it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from pathlib import Path

import asyncpg
import httpx
import pytest

from payorch.client import PayorchClient
from payorch.providers.registry import PROVIDER_IDS
from tests.backups import new_intent, paid, verified_heads
from tests.client.signed_receiver import Receiver, wait_for_events, webhook_receiver
from tests.databases import create_postgres_database, drop_postgres_database
from tests.live import create_sandbox, free_port, live_server, payorch_env, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

OTHER_KEY = "not-the-key-of-this-database-0123456789"
# Deliveries refused during the dump are tried again 20 s later (seven attempts over two
# minutes): they are still pending when the backup is restored.
RETRIES = "20,20,20,20,20,20"


async def _rows(url: str, query: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(query))
    finally:
        await conn.close()


def test_a_dump_taken_while_payments_run_restores_with_its_key(tmp_path: Path) -> None:
    source, admin = asyncio.run(create_postgres_database())
    target, _ = asyncio.run(create_postgres_database())
    dump = tmp_path / "payorch.dump"
    try:
        _drill(source, target, dump)
    finally:
        for url in (source, target):
            asyncio.run(drop_postgres_database(url, admin))


def _drill(source: str, target: str, dump: Path) -> None:  # noqa: PLR0915 - one story
    env = payorch_env(source, PAYORCH_WEBHOOK_RETRY_SCHEDULE=RETRIES)
    assert run_cli(["migrate"], env).returncode == 0
    app = create_sandbox(env)
    with webhook_receiver() as (host, receiver):
        _drill_with(env, target, dump, app, host, receiver)


def _drill_with(  # noqa: PLR0913, PLR0915 - one story
    env: dict[str, str], target: str, dump: Path, app: dict[str, str], host: str, receiver: Receiver
) -> None:
    source = env["PAYORCH_DATABASE_URL"]
    merchant = app["merchant_account_id"]
    before: dict[str, dict[str, object]] = {}  # intent id -> its body, answered before the dump
    with live_server(env) as base:
        client = PayorchClient(app["api_key"], base)
        endpoint = client.create_webhook_endpoint(url=f"http://{host}:8080/hooks")
        assert endpoint.secret is not None
        receiver.secret = endpoint.secret.get_secret_value()
        # A connector with credentials (encrypted at rest), on a second application.
        other = json.loads(
            run_cli(
                ["applications", "create", "--name", "b", "--environment", "SANDBOX", "--json"], env
            ).stdout
        )
        added = httpx.post(
            f"{base}/v1/admin/merchant-accounts/{other['merchant_account_id']}/connectors",
            json={
                "provider": "provider_a_redirect_post",
                "mode": "SANDBOX",
                "credentials": {"commerce_code": "597055555532", "api_key": "secret-api-key-value"},
            },
            headers={"Authorization": f"Bearer {other['api_key']}"},
        )
        assert added.status_code == 201, added.text

        first = [paid(client, merchant, n) for n in range(3)]
        refunded = client.get_payment_intent(first[0]).payment
        assert refunded is not None
        client.create_refund(refunded.id, amount=400)
        wait_for_events(receiver, {(i, "payment.authorized") for i in first})

        # The receiver goes down; payments go on in a thread while the dump is taken.
        receiver.accepting = False
        made: list[str] = []
        stop = threading.Event()

        def paying() -> None:
            with PayorchClient(app["api_key"], base) as payer:
                n = 3
                while not stop.is_set():
                    made.append(paid(payer, merchant, n))
                    n += 1

        thread = threading.Thread(target=paying)
        thread.start()
        try:
            deadline = time.monotonic() + 120
            while len(made) < 2:
                assert thread.is_alive() and time.monotonic() < deadline, "no payment in the second phase"
                time.sleep(0.1)
            for intent_id in [*first, *made]:
                before[intent_id] = httpx.get(
                    f"{base}/v1/payment-intents/{intent_id}",
                    headers={"Authorization": f"Bearer {app['api_key']}"},
                ).json()
            dumped = subprocess.run(  # noqa: S603, S607 - PostgreSQL's own tool, fixed arguments
                ["pg_dump", "--format=custom", f"--file={dump}", source],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert dumped.returncode == 0, dumped.stderr
        finally:
            stop.set()
            thread.join(timeout=120)
        client.close()
    heads = verified_heads(env)

    restored = subprocess.run(  # noqa: S603, S607 - PostgreSQL's own tool, fixed arguments
        ["pg_restore", "--no-owner", f"--dbname={target}", str(dump)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert restored.returncode == 0, restored.stderr
    pending = asyncio.run(_rows(target, "SELECT id FROM webhook_deliveries WHERE status = 'PENDING'"))
    assert pending, "the dump holds no pending delivery"

    # Another key: serve and worker are refused with one line, before anything is served.
    wrong = payorch_env(target, PAYORCH_SECRET_KEY=OTHER_KEY)
    for args in (["serve", "--port", str(free_port())], ["worker"]):
        refused = run_cli(args, wrong)
        assert refused.returncode == 2, refused
        assert "PAYORCH_SECRET_KEY: no key of it decrypts the stored secrets" in refused.stderr, (
            refused.stderr
        )
        assert "Traceback" not in refused.stderr and OTHER_KEY not in refused.stderr + refused.stdout

    # The same key: everything answered before the dump is there, the log verifies to the same heads.
    env_b = payorch_env(target, PAYORCH_WEBHOOK_RETRY_SCHEDULE=RETRIES)
    assert verified_heads(env_b) == heads
    checked = run_cli(["secret-key", "reencrypt"], env_b)  # every stored secret decrypts
    assert checked.returncode == 0 and "re-encrypted" not in checked.stdout, checked
    receiver_wanted = {(i, "payment.authorized") for i in before}
    receiver.accepting = True  # the receiver is back
    with live_server(env_b) as base_b:
        with PayorchClient(app["api_key"], base_b) as client_b:
            headers = {"Authorization": f"Bearer {app['api_key']}"}
            for intent_id, body in before.items():
                read = httpx.get(f"{base_b}/v1/payment-intents/{intent_id}", headers=headers).json()
                assert read == body
            payment = client_b.get_payment(refunded.id)
            assert payment.refunded_amount == 400
            # The same idempotency key answers the same intent; a paid intent is not paid again.
            for n, intent_id in enumerate(first):
                assert new_intent(client_b, merchant, n).id == intent_id
                checkout = httpx.post(
                    f"{base_b}/v1/payment-intents/{intent_id}/checkout",
                    json={"provider": PROVIDER_IDS[0]},
                    headers=headers,
                )
                assert checkout.status_code == 409 and "INVALID_STATE" in checkout.text, checkout.text
            new = paid(client_b, merchant, 100)
            assert client_b.get_payment_intent(new).status == "AUTHORIZED"
        # The pending deliveries resume and arrive, signed with the restored secret.
        wait_for_events(receiver, receiver_wanted, 180)
        deadline = time.monotonic() + 180
        while asyncio.run(_rows(target, "SELECT id FROM webhook_deliveries WHERE status <> 'SUCCEEDED'")):
            assert time.monotonic() < deadline, "deliveries still pending after the restore"
            time.sleep(0.5)
    assert receiver.rejected == 0
