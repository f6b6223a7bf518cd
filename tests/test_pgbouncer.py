"""payorch behind Debian's pgbouncer (1.18: before 1.21's prepared statement support), in
transaction pooling mode and in session mode, as real processes: `payorch migrate`, then
`payorch serve` with its worker, `applications create`, concurrent sandbox payments over HTTP
(create, checkout, the buyer on the simulator, read), a refund and the worker's signed webhooks.

Transaction pooling without PAYORCH_DATABASE_TRANSACTION_POOLING fails (asyncpg's named
prepared statements meet another client's on a shared server connection: "prepared statement
... already exists"); with it, and in session mode with or without it, everything passes
(payorch.db.pooling says why). Each run has its own empty database, migrated through the pooler.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import IO

import pytest

from payorch.client import PaymentIntent, PayorchClient
from tests.client.buyer import pay
from tests.client.signed_receiver import wait_for_events, webhook_receiver
from tests.databases import create_postgres_database, drop_postgres_database
from tests.live import create_sandbox, live_server, payorch_env, run_cli
from tests.needs import missing
from tests.pgbouncer import installed, pgbouncer, through, version

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PAYMENTS = 8  # paid four at a time
CONCURRENCY = 4
START_SECONDS = 180  # serve migrates first; through the pooler on a loaded machine it takes long
POOL_SIZE = "4"  # PAYORCH_DATABASE_POOL_SIZE: each process's engine pool
# Server connections of pgbouncer: a transaction pooler shares two among every client; a session
# pooler gives each client connection its own for the client's life, so it needs them all
# (two API pools, a worker's, the statement lane's 10, the LISTEN, the command line's).
SERVER_CONNECTIONS = {"transaction": 2, "session": 40}


@pytest.fixture
def empty_database() -> Iterator[str]:
    """A new empty PostgreSQL database (direct URL), dropped afterwards."""
    if installed() is None:
        missing("Debian's pgbouncer is not installed (apt-get install pgbouncer)")
    url, admin = asyncio.run(create_postgres_database())
    try:
        yield url
    finally:
        asyncio.run(drop_postgres_database(url, admin))


def test_the_pgbouncer_is_one_without_prepared_statement_support() -> None:
    """The failure below is the one of PgBouncer before 1.21 (max_prepared_statements)."""
    if installed() is None:
        missing("Debian's pgbouncer is not installed (apt-get install pgbouncer)")
    major, minor = (int(part) for part in version().split()[1].split(".")[:2])
    assert (major, minor) < (1, 21), version()


def _one_payment(base: str, app: dict[str, str], n: int) -> PaymentIntent:
    with PayorchClient(app["api_key"], base) as client:
        intent = client.create_payment_intent(
            merchant_account_id=app["merchant_account_id"],
            external_reference=f"order-{n}",
            amount=1000 + n,
            currency="CLP",
            return_url="https://shop.example/return",
        )
        checkout = client.create_checkout(intent.id, provider="auto")
        assert pay(checkout, "approve")["payment_intent_id"] == [intent.id]
        read = client.get_payment_intent(intent.id)
        assert read.status == "AUTHORIZED" and read.payment is not None, read
        return read


def drive(env: dict[str, str], log: IO[str]) -> None:
    """Migrate, serve (with its worker), create a sandbox, pay PAYMENTS intents CONCURRENCY at a
    time, refund one, and receive every webhook. Raises AssertionError (or the client's error)
    at the first step that fails."""
    migrated = run_cli(["migrate"], env, timeout=180)
    assert migrated.returncode == 0, migrated.stderr
    with live_server(env, output=log, start_seconds=START_SECONDS) as base:
        app = create_sandbox(env)
        with webhook_receiver() as (host, receiver), PayorchClient(app["api_key"], base) as client:
            endpoint = client.create_webhook_endpoint(url=f"http://{host}:8080/hooks")
            assert endpoint.secret is not None
            receiver.secret = endpoint.secret.get_secret_value()
            with ThreadPoolExecutor(CONCURRENCY) as threads:
                intents = list(threads.map(lambda n: _one_payment(base, app, n), range(PAYMENTS)))
            payment = intents[0].payment
            assert payment is not None
            refund = client.create_refund(payment.id, amount=400)
            assert refund.status == "SUCCEEDED", refund
            wanted = {(intent.id, "payment.authorized") for intent in intents} | {
                (intents[0].id, "refund.succeeded")
            }
            wait_for_events(receiver, wanted)  # the worker delivers them (it polls behind a pooler)
            assert receiver.rejected == 0


def test_transaction_pooling_breaks_named_prepared_statements_without_the_setting(
    empty_database: str,
) -> None:
    with (
        pgbouncer("transaction", SERVER_CONNECTIONS["transaction"]) as port,
        tempfile.TemporaryFile("w+") as log,
    ):
        env = payorch_env(through(empty_database, port), PAYORCH_DATABASE_POOL_SIZE=POOL_SIZE)
        with pytest.raises(Exception) as failed:  # noqa: PT011 - whichever step meets it first
            drive(env, log)
        log.seek(0)
        seen = f"{failed.value}\n{log.read()}"
    assert "prepared statement" in seen and ("already exists" in seen or "does not exist" in seen), seen[
        -3000:
    ]


@pytest.mark.parametrize(
    ("mode", "setting"), [("transaction", "true"), ("session", "true"), ("session", "false")]
)
def test_payorch_works_behind_pgbouncer(empty_database: str, mode: str, setting: str) -> None:
    with pgbouncer(mode, SERVER_CONNECTIONS[mode]) as port, tempfile.TemporaryFile("w+") as log:
        env = payorch_env(
            through(empty_database, port),
            PAYORCH_DATABASE_POOL_SIZE=POOL_SIZE,
            PAYORCH_DATABASE_TRANSACTION_POOLING=setting,
        )
        try:
            drive(env, log)
        except BaseException:
            log.seek(0)
            print(log.read()[-5000:])  # the server's and worker's output, shown with the failure
            raise
