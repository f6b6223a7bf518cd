"""SQL of the provider_words table: keep a word once, find the words of a connector."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import record_of
from payorch.db.tables.provider_words import provider_words as words
from payorch.ids import new_id
from payorch.providers.words import ProviderWord, WordQuery


async def insert_if_absent(
    conn: AsyncConnection, connector_id: str, provider: str, word: ProviderWord, now: datetime
) -> bool:
    """Keep ``word``; False when the same (reference, event, success) was kept before."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    values = {
        "id": new_id("pwd"),
        "connector_id": connector_id,
        "provider": provider,
        "event": word.event,
        "reference": word.reference,
        "success": word.success,
        "original_reference": word.original_reference,
        "merchant_reference": word.merchant_reference,
        "amount": word.amount,
        "currency": word.currency,
        "reason": word.reason,
        "event_at": word.event_at,
        "recorded_at": now,
    }
    done = await conn.execute(dialect.insert(words).on_conflict_do_nothing(), values)
    return done.rowcount == 1


async def find(conn: AsyncConnection, connector_id: str, wanted: WordQuery) -> list[ProviderWord]:
    query = select(words).where(
        words.c.connector_id == connector_id, words.c.event.in_(sorted(wanted.events))
    )
    for column, value in (
        (words.c.reference, wanted.reference),
        (words.c.original_reference, wanted.original_reference),
        (words.c.merchant_reference, wanted.merchant_reference),
    ):
        if value is not None:
            query = query.where(column == value)
    rows = (await conn.execute(query.order_by(words.c.recorded_at, words.c.id))).mappings()
    return [record_of(ProviderWord, row) for row in rows]
