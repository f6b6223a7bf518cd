"""Listing the application's payment intents, newest first (GET /v1/payment-intents)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.intents import repository
from payorch.intents.records import PaymentIntent
from payorch.intents.schemas import IntentListQuery
from payorch.pagination import Page, id_bounds, id_of_cursor, page_of


async def list_intents(
    conn: AsyncConnection, caller: Caller, query: IntentListQuery
) -> Page[PaymentIntent]:
    after = id_of_cursor(query.cursor, prefix="payi") if query.cursor else None
    lowest, below = id_bounds("payi", query.from_, query.to, after)
    found = await repository.page(
        conn, caller.application_id, query, lowest_id=lowest, below_id=below, limit=query.limit + 1
    )
    return page_of(found, query.limit, lambda intent: intent.id)
