"""Listing the application's payment intents, newest first (GET /v1/payment-intents)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.intents import repository
from payorch.intents.records import IntentFilter, PaymentIntent
from payorch.intents.schemas import IntentListQuery
from payorch.pagination import Page, id_range, page_of


async def list_intents(
    conn: AsyncConnection, caller: Caller, query: IntentListQuery
) -> Page[PaymentIntent]:
    lowest, below = id_range("payi", query.cursor, query.from_, query.to)
    listed = IntentFilter(
        statuses=tuple(query.status or ()),
        merchant_account_id=query.merchant_account_id,
        external_reference=query.external_reference,
        provider=query.provider,
    )
    found = await repository.page(
        conn, caller.application_id, listed, lowest_id=lowest, below_id=below, limit=query.limit + 1
    )
    return page_of(found, query.limit, lambda intent: intent.id)
