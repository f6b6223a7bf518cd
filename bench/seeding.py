"""Authorized payments and their intents written straight into a migrated PostgreSQL database
(COPY, asyncpg ``copy_records_to_table``, in batches), for the benchmarks that need a large one.

The payments are spread over the past year with time-ordered ids, one application's (made here
unless given); ``seed`` returns {"application_id", "api_key" (new applications only), "payments"}.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime

import asyncpg

from payorch.applications.service import create_application
from payorch.clock import SystemClock
from payorch.db import Database
from payorch.ids import new_id

BATCH = 50_000
YEAR_MS = 365 * 24 * 3600 * 1000
STATUSES = ("AUTHORIZED",) * 8 + ("PARTIALLY_REFUNDED", "REFUNDED")


async def new_app(database_url: str) -> tuple[str, str, str]:
    """(application id, merchant id, API key) of a new SANDBOX application."""
    db = Database(database_url)
    try:
        async with db.transaction() as conn:
            created = await create_application(
                conn, SystemClock(), name="bench", environment="SANDBOX", merchant_name="bench"
            )
    finally:
        await db.dispose()
    return created.application_id, created.merchant_account_id, created.api_key


async def merchant_of(conn: asyncpg.Connection, application_id: str) -> str:
    """The first merchant account of ``application_id``."""
    merchant: str = await conn.fetchval(
        "SELECT id FROM merchant_accounts WHERE application_id = $1 LIMIT 1", application_id
    )
    return merchant


async def seed(database_url: str, count: int, application_id: str | None) -> dict[str, object]:
    """``count`` payments (and their intents) for ``application_id``, or for a new application."""
    api_key = None
    if application_id is None:
        application_id, merchant_id, api_key = await new_app(database_url)
    conn = await asyncpg.connect(database_url)
    try:
        if api_key is None:
            merchant_id = await merchant_of(conn, application_id)
        now_ms = int(time.time() * 1000)
        start_ms = now_ms - YEAR_MS
        step = YEAR_MS / max(count, 1)
        rng = random.Random(count)  # noqa: S311 - test data
        done = 0
        while done < count:
            n = min(BATCH, count - done)
            intents, payments = [], []
            for i in range(done, done + n):
                at_ms = int(start_ms + i * step) + rng.randrange(max(int(step), 1))
                at = datetime.fromtimestamp(at_ms / 1000, UTC)
                intent_id, payment_id = new_id("payi", at_ms), new_id("pay", at_ms)
                amount = rng.randrange(1000, 200_000)
                status = rng.choice(STATUSES)
                refunded = {"AUTHORIZED": 0, "REFUNDED": amount}.get(status, amount // 2)
                reference = f"order-{i}"
                intents.append(
                    (
                        intent_id,
                        application_id,
                        merchant_id,
                        status,
                        reference,
                        amount,
                        "CLP",
                        None,
                        "auto",
                        "provider_a_redirect_post",
                        "https://shop.example/return",
                        "{}",
                        at,
                        at,
                    )
                )
                payments.append(
                    (
                        payment_id,
                        application_id,
                        intent_id,
                        merchant_id,
                        reference,
                        status,
                        amount,
                        refunded,
                        "CLP",
                        "provider_a_redirect_post",
                        f"tok{i:061d}",
                        "1213",
                        at,
                        at,
                    )
                )
            async with conn.transaction():
                await conn.copy_records_to_table(
                    "payment_intents",
                    records=intents,
                    columns=[
                        "id",
                        "application_id",
                        "merchant_account_id",
                        "status",
                        "external_reference",
                        "amount",
                        "currency",
                        "description",
                        "requested_provider",
                        "provider",
                        "return_url",
                        "metadata",
                        "created_at",
                        "updated_at",
                    ],
                )
                await conn.copy_records_to_table(
                    "payments",
                    records=payments,
                    columns=[
                        "id",
                        "application_id",
                        "payment_intent_id",
                        "merchant_account_id",
                        "external_reference",
                        "status",
                        "amount",
                        "refunded_amount",
                        "currency",
                        "provider",
                        "provider_reference",
                        "authorization_code",
                        "authorized_at",
                        "created_at",
                    ],
                )
            done += n
        await conn.execute("ANALYZE payments")
        await conn.execute("ANALYZE payment_intents")
        total = await conn.fetchval("SELECT count(*) FROM payments")
    finally:
        await conn.close()
    return {"application_id": application_id, "api_key": api_key, "payments": total}
