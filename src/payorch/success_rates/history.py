"""Each provider's authorization rate and volume over a recent window, read from the intents
and their checkouts (the dashboard's overview and routing pages). Unlike the routing window
(counts.py), this is the database's whole record of the period.

The window is an id range of the intents (ids are time-ordered, payorch.ids), as in
intents/stats.py. An intent counts for the provider of its last checkout (not REPLACED).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import checkouts
from payorch.ids import lowest_id

AUTHORIZED = frozenset({"AUTHORIZED", "PARTIALLY_REFUNDED", "REFUNDED"})
FAILED = frozenset({"FAILED"})  # declined, or ended unpaid while in process; not a buyer giving up


@dataclass(frozen=True, slots=True)
class ProviderRecord:
    provider: str
    volume: int  # intents sent to it
    authorized: int
    failed: int

    @property
    def rate(self) -> float | None:
        decided = self.authorized + self.failed
        return self.authorized / decided if decided else None


async def provider_records(
    conn: AsyncConnection, application_id: str, since: datetime, merchant_account_id: str | None = None
) -> list[ProviderRecord]:
    """By provider, of the intents created since ``since`` (one merchant's, or all)."""
    query = (
        select(checkouts.c.provider, intents.c.status, func.count())
        .select_from(intents.join(checkouts, checkouts.c.payment_intent_id == intents.c.id))
        .where(
            intents.c.application_id == application_id,
            intents.c.id >= lowest_id("payi", int(since.timestamp() * 1000)),
            checkouts.c.status != "REPLACED",
        )
        .group_by(checkouts.c.provider, intents.c.status)
    )
    if merchant_account_id is not None:
        query = query.where(intents.c.merchant_account_id == merchant_account_id)
    tallies: dict[str, list[int]] = {}
    for provider, status, count in (await conn.execute(query)).all():
        tally = tallies.setdefault(provider, [0, 0, 0])
        tally[0] += count
        tally[1] += count if status in AUTHORIZED else 0
        tally[2] += count if status in FAILED else 0
    return [ProviderRecord(p, *tallies[p]) for p in sorted(tallies)]
