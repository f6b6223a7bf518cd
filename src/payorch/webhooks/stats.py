"""How an application's webhook deliveries are doing (the dashboard's overview)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.webhooks import webhook_deliveries as deliveries
from payorch.webhooks.records import EXHAUSTED, PENDING


@dataclass(frozen=True, slots=True)
class DeliveryHealth:
    backlog: int  # PENDING: not delivered yet
    failing: int  # of those, with at least one failed attempt
    exhausted: int  # EXHAUSTED since the window's start
    oldest_pending_at: datetime | None


async def delivery_health(conn: AsyncConnection, application_id: str, since: datetime) -> DeliveryHealth:
    mine = deliveries.c.application_id == application_id
    pending = select(
        func.count(), func.count().filter(deliveries.c.attempts > 0), func.min(deliveries.c.created_at)
    ).where(mine, deliveries.c.status == PENDING)
    backlog, failing, oldest = (await conn.execute(pending)).one()
    exhausted = select(func.count()).where(
        mine, deliveries.c.status == EXHAUSTED, deliveries.c.updated_at >= since
    )
    count = (await conn.execute(exhausted)).scalar_one()
    return DeliveryHealth(int(backlog), int(failing), int(count), oldest)
