"""SQL of the simulated market: one row per (owner, provider), replaced whole on each change."""

from __future__ import annotations

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import record_of
from payorch.db.tables.simulator import simulator_markets as markets
from payorch.simulator.market.records import SimMarket

_MARKETS = select(markets).where(markets.c.owner == bindparam("owner"))
_DELETE = delete(markets).where(
    markets.c.owner == bindparam("owner"), markets.c.provider == bindparam("provider")
)
_INSERT = insert(markets)


async def markets_of(conn: AsyncConnection, owner: str) -> dict[str, SimMarket]:
    """The owner's markets by provider (the simulator's name)."""
    rows = await conn.execute(_MARKETS, {"owner": owner})
    found = [record_of(SimMarket, row._mapping) for row in rows]
    return {market.provider: market for market in found}


async def put_market(conn: AsyncConnection, market: SimMarket) -> None:
    """Replace the owner's market at that provider (a delete then an insert: one row after)."""
    await conn.execute(_DELETE, {"owner": market.owner, "provider": market.provider})
    await conn.execute(
        _INSERT,
        {
            "owner": market.owner,
            "provider": market.provider,
            "approve": market.approve,
            "decline": market.decline,
            "give_up": market.give_up,
            "pending": market.pending,
            "updated_at": market.updated_at,
        },
    )


async def delete_market(conn: AsyncConnection, owner: str, provider: str) -> bool:
    """Whether there was one."""
    deleted = await conn.execute(_DELETE, {"owner": owner, "provider": provider})
    return bool(deleted.rowcount)
