"""The floor for bench/compare.py: the least a create can do on payorch's stack.

FastAPI + asyncpg, no SQLAlchemy, no middleware: ``POST /v1/payment-intents`` validates the same
body as payorch and writes two rows (the intent and its event) in one transaction, then answers
201 with the intent. Headers (key, Idempotency-Key) are ignored, so the same client script drives
both servers.

    BARE_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/bare \
        uvicorn --factory bench.bare_app:create_app --workers 2
    python -m bench.bare_app init postgresql://...   # create the two tables (once)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import asyncpg
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

SCHEMA = """
CREATE TABLE IF NOT EXISTS bare_intents (
    id text PRIMARY KEY, merchant_account_id text NOT NULL, external_reference text NOT NULL,
    amount bigint NOT NULL, currency text NOT NULL, return_url text NOT NULL,
    metadata jsonb NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS bare_events (
    id text PRIMARY KEY, type text NOT NULL, intent_id text NOT NULL, payload jsonb NOT NULL,
    created_at timestamptz NOT NULL
);
"""


class CreateIntent(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    merchant_account_id: Annotated[str, Field(min_length=1, max_length=40)]
    external_reference: Annotated[str, Field(min_length=1, max_length=64)]
    amount: Annotated[int, Field(gt=0, le=10**12)]
    currency: Annotated[str, Field(min_length=3, max_length=3)]
    description: Annotated[str | None, Field(max_length=255)] = None
    provider: str = "auto"
    return_url: Annotated[str, Field(max_length=2048)]
    metadata: dict[str, Annotated[str, Field(max_length=500)]] = Field(default_factory=dict)


def create_app() -> FastAPI:
    pools: list[asyncpg.Pool] = []

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        pools.append(await asyncpg.create_pool(os.environ["BARE_DATABASE_URL"], max_size=20))
        yield
        await pools[0].close()

    app = FastAPI(lifespan=lifespan)

    @app.post("/v1/payment-intents", status_code=201)
    async def create(body: CreateIntent) -> JSONResponse:
        intent_id = f"pi_{uuid.uuid4().hex}"
        metadata = json.dumps(body.metadata)
        now = time.time()
        async with pools[0].acquire() as conn, conn.transaction():
            created = await conn.fetchval(
                "INSERT INTO bare_intents VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb,"
                " 'REQUIRES_CHECKOUT', to_timestamp($8)) RETURNING created_at",
                intent_id,
                body.merchant_account_id,
                body.external_reference,
                body.amount,
                body.currency,
                body.return_url,
                metadata,
                now,
            )
            await conn.execute(
                "INSERT INTO bare_events VALUES ($1, 'payment_intent.created', $2, $3::jsonb, $4)",
                f"evt_{uuid.uuid4().hex}",
                intent_id,
                json.dumps({"id": intent_id, "amount": body.amount}),
                created,
            )
        return JSONResponse(
            {
                "id": intent_id,
                "status": "REQUIRES_CHECKOUT",
                **body.model_dump(),
                "created_at": created.isoformat(),
            },
            status_code=201,
        )

    return app


async def init(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(SCHEMA)
    finally:
        await conn.close()


if __name__ == "__main__":
    if sys.argv[1:2] != ["init"] or len(sys.argv) != 3:
        raise SystemExit("usage: python -m bench.bare_app init <postgresql url>")
    asyncio.run(init(sys.argv[2]))
