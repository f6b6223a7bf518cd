"""Reconciling one day of N provider C payments on the simulator, in process (PostgreSQL).

    PYTHONPATH=src:. .venv/bin/python -m bench.reconcile_day \
        --database-url postgresql://postgres@127.0.0.1:5432/DB --payments 100000 [--changed-every 1000]

A new sandbox application with MOCK connectors gets N paid provider C payments checked out
yesterday (UTC), seeded directly with COPY on both sides: payorch's intents, checkouts and
payments, and the simulator's Checkout Sessions and PaymentIntents (so no page, no call). Every
``--changed-every``-th PaymentIntent shows another amount at the provider (a finding each). Then
yesterday is reconciled once (payorch.reconciliation.service.reconcile_day, as the worker's job
does): provider C's reader lists the day's sessions, PaymentIntents and refunds page by page
(100 a page) through the in-process simulator, and matching compares them with the day's books.
Prints one JSON line: payments, seconds, SQL statements run (all of them: payorch's and the
simulated provider's, which share the database), matched, findings, the process's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from sqlalchemy import event

from payorch.app import create_app
from payorch.applications.service import create_application
from payorch.clock import SystemClock
from payorch.composition import build_runtime
from payorch.config import Settings
from payorch.connectors.service import add_mock_connectors
from payorch.db.migrate import upgrade_in_thread
from payorch.ids import new_id
from payorch.reconciliation import service
from payorch.runtime import Runtime

C = "provider_c_redirect_get"
SECRET = "bench-reconcile-day-secret-key-0123456789"
BATCH = 20_000


async def application(runtime: Runtime) -> tuple[str, str, str]:
    """(application id, merchant id, provider C's connector id)."""
    clock = runtime.clock
    async with runtime.database.transaction() as conn:
        app = await create_application(conn, clock, name="bench", environment="SANDBOX", merchant_name="shop")
        await add_mock_connectors(
            conn, clock, application_id=app.application_id, merchant_account_id=app.merchant_account_id
        )
    pg = await asyncpg.connect(runtime.settings.database_url)
    try:
        connector: str = await pg.fetchval(
            "SELECT id FROM connectors WHERE application_id = $1 AND provider = $2", app.application_id, C
        )
    finally:
        await pg.close()
    return app.application_id, app.merchant_account_id, connector


def rows(i: int, at: datetime, ids: tuple[str, str, str], changed_every: int) -> dict[str, tuple[Any, ...]]:
    application_id, merchant_id, connector_id = ids
    at_ms = int(at.timestamp() * 1000)
    intent, payment, checkout = new_id("payi", at_ms), new_id("pay", at_ms), new_id("chk", at_ms)
    tag = application_id[-8:]  # another run in the same database makes other ids
    session, pi = f"cs_test_{tag}{i:050d}", f"pi_{tag}{i:016d}"
    amount = 1000 + (i * 7919) % 199_000
    shown = amount + 1 if changed_every and i % changed_every == 0 else amount
    reference = f"order-{i}"
    url = f"https://checkout.example/{session}"
    return {
        "payment_intents": (
            intent, application_id, merchant_id, "AUTHORIZED", reference, amount, "CLP", None, "auto", C,
            "https://shop.example/return", "{}", at, at,
        ),
        "checkouts": (
            checkout, application_id, intent, connector_id, C, "CLOSED", session, pi, url, "GET", "{}", "{}",
            at + timedelta(hours=1), at, at,
        ),
        "payments": (
            payment, application_id, intent, merchant_id, reference, "AUTHORIZED", amount, 0, "CLP", C, pi,
            "ch_bench", at, at,
        ),
        "simulator_c_sessions": (
            session, application_id, "complete", "paid", amount, "clp", intent, pi, "https://shop.example/ok",
            None, "order", "{}", json.dumps({"payment_intent_id": intent}), at + timedelta(hours=1), at,
        ),
        "simulator_c_payment_intents": (
            pi, application_id, session, "succeeded", shown, shown, 0, "clp", f"ch_{i}", None,
            json.dumps({"payment_intent_id": intent}), at,
        ),
    }


COLUMNS = {
    "payment_intents": [
        "id", "application_id", "merchant_account_id", "status", "external_reference", "amount", "currency",
        "description", "requested_provider", "provider", "return_url", "metadata", "created_at", "updated_at",
    ],
    "checkouts": [
        "id", "application_id", "payment_intent_id", "connector_id", "provider", "status", "reference",
        "payment_reference", "url", "method", "fields", "provider_data", "expires_at", "created_at", "closed_at",
    ],
    "payments": [
        "id", "application_id", "payment_intent_id", "merchant_account_id", "external_reference", "status",
        "amount", "refunded_amount", "currency", "provider", "provider_reference", "authorization_code",
        "authorized_at", "created_at",
    ],
    "simulator_c_sessions": [
        "id", "owner", "status", "payment_status", "amount_total", "currency", "client_reference_id",
        "payment_intent_id", "success_url", "cancel_url", "product_name", "metadata", "intent_metadata",
        "expires_at", "created_at",
    ],
    "simulator_c_payment_intents": [
        "id", "owner", "session_id", "status", "amount", "amount_received", "amount_refunded", "currency",
        "latest_charge", "decline_code", "metadata", "created_at",
    ],
}


async def seed(database_url: str, ids: tuple[str, str, str], day_start: datetime, count: int, every: int) -> None:
    conn = await asyncpg.connect(database_url)
    step = 86_400 / max(count, 1)
    rng = random.Random(count)  # noqa: S311 - test data
    try:
        for first in range(0, count, BATCH):
            batch: dict[str, list[tuple[Any, ...]]] = {table: [] for table in COLUMNS}
            for i in range(first, min(first + BATCH, count)):
                at = day_start + timedelta(seconds=i * step + rng.random() * step * 0.9)
                for table, row in rows(i, at, ids, every).items():
                    batch[table].append(row)
            async with conn.transaction():
                for table, records in batch.items():
                    await conn.copy_records_to_table(table, records=records, columns=COLUMNS[table])
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


async def run(database_url: str, count: int, changed_every: int) -> dict[str, object]:
    await asyncio.to_thread(upgrade_in_thread, database_url)
    settings = Settings.model_validate(
        {"database_url": database_url, "secret_key": SECRET, "rate_limit": "1000000/second"}
    )
    runtime = build_runtime(settings, clock=SystemClock())
    try:
        create_app(runtime=runtime)  # the in-process app the MOCK connector's calls go to
        ids = await application(runtime)
        day = (runtime.clock.now() - timedelta(days=1)).date()
        day_start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        started = time.perf_counter()
        await seed(database_url, ids, day_start, count, changed_every)
        seeded = time.perf_counter() - started
        statements = 0

        def counted(*_: object) -> None:
            nonlocal statements
            statements += 1

        event.listen(runtime.database.engine.sync_engine, "before_cursor_execute", counted)
        started = time.perf_counter()
        summary = await service.reconcile_day(runtime, ids[0], day)
        took = time.perf_counter() - started
        event.remove(runtime.database.engine.sync_engine, "before_cursor_execute", counted)
        of_c = summary[C]
        assert isinstance(of_c, dict)
        return {
            "payments": count,
            "seed_seconds": round(seeded, 1),
            "reconcile_seconds": round(took, 1),
            "statements": statements,
            "matched": of_c["matched"],
            "findings": of_c["findings"],
            "unavailable": of_c["unavailable"],
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        }
    finally:
        await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--payments", type=int, default=100_000)
    parser.add_argument("--changed-every", type=int, default=1000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.database_url, args.payments, args.changed_every))))


if __name__ == "__main__":
    main()
