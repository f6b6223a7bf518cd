"""Helpers shared by the tests of this directory."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import select

from payorch.db.tables import events
from payorch.runtime import Runtime
from tests.kit import Sandbox


async def event_payloads(runtime: Runtime, intent_id: str) -> list[dict[str, object]]:
    async with runtime.database.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(events.c.payload).where(events.c.payment_intent_id == intent_id).order_by(events.c.seq)
            )
        ).all()
    return [json.loads(row.payload) for row in rows]


async def intent_status(client: httpx.AsyncClient, app: Sandbox, intent_id: str) -> str:
    response = await client.get(f"/v1/payment-intents/{intent_id}", headers=app.headers)
    assert response.status_code == 200, response.text
    return str(response.json()["status"])
