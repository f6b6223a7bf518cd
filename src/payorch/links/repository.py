"""All SQL of payment links (and the one read of intents they need: the intents each link made)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import and_, bindparam, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import column_values, record_of
from payorch.db.tables import payment_intents as intents
from payorch.db.tables.links import payment_links as links
from payorch.intents.states import IntentStatus
from payorch.links.records import PAID, LinkPayment, LinkStatus, PaymentLink, Tally

_INSERT = insert(links)
_GET = select(links).where(links.c.id == bindparam("link_id"))
_OF_APPLICATION = _GET.where(links.c.application_id == bindparam("application_id"))
_COUNT_ACTIVE = select(func.count()).where(
    links.c.application_id == bindparam("application_id"), links.c.status == LinkStatus.ACTIVE.value
)
_LOCK = _GET.with_for_update()  # SQLite ignores it: its one writer (BEGIN IMMEDIATE) serializes
_MOVE = update(links).where(links.c.id == bindparam("link_id"), links.c.status == bindparam("expected"))


async def insert_link(conn: AsyncConnection, link: PaymentLink) -> None:
    await conn.execute(_INSERT, column_values(link))


async def get(conn: AsyncConnection, application_id: str, link_id: str) -> PaymentLink | None:
    found = await conn.execute(_OF_APPLICATION, {"link_id": link_id, "application_id": application_id})
    row = found.mappings().first()
    return record_of(PaymentLink, row) if row is not None else None


async def get_any(conn: AsyncConnection, link_id: str) -> PaymentLink | None:
    """By id alone: the buyer's page, which has no key."""
    row = (await conn.execute(_GET, {"link_id": link_id})).mappings().first()
    return record_of(PaymentLink, row) if row is not None else None


async def lock(conn: AsyncConnection, link_id: str) -> PaymentLink | None:
    """The link, its row locked until the transaction ends (payorch.links.slots)."""
    row = (await conn.execute(_LOCK, {"link_id": link_id})).mappings().first()
    return record_of(PaymentLink, row) if row is not None else None


async def count_holding(
    conn: AsyncConnection, link_id: str, statuses: Sequence[str], *, created_since: datetime
) -> int:
    """The link's intents in ``statuses``, and its CREATED ones made at or after ``created_since``."""
    holding = or_(
        intents.c.status.in_(list(statuses)),
        and_(intents.c.status == IntentStatus.CREATED.value, intents.c.created_at >= created_since),
    )
    query = select(func.count()).where(intents.c.payment_link_id == link_id, holding)
    return int((await conn.execute(query)).scalar_one())


async def count_active(conn: AsyncConnection, application_id: str) -> int:
    return int((await conn.execute(_COUNT_ACTIVE, {"application_id": application_id})).scalar_one())


async def page(
    conn: AsyncConnection,
    application_id: str,
    statuses: Sequence[str],
    *,
    before: str | None,
    limit: int,
) -> list[PaymentLink]:
    """Newest first, on (application_id, status, id) or (application_id, id)."""
    query = select(links).where(links.c.application_id == application_id)
    if statuses:
        query = query.where(links.c.status.in_(list(statuses)))
    if before is not None:
        query = query.where(links.c.id < before)
    rows = (await conn.execute(query.order_by(links.c.id.desc()).limit(limit))).mappings()
    return [record_of(PaymentLink, row) for row in rows]


async def move(
    conn: AsyncConnection,
    link_id: str,
    *,
    expected: str,
    new: str,
    at: datetime,
    buyer_message: str | None = None,
) -> bool:
    """Compare-and-set of the status: False when another request moved it first."""
    values: dict[str, object] = {"status": new, "updated_at": at}
    if buyer_message is not None:
        values["buyer_message"] = buyer_message
    moved = await conn.execute(_MOVE.values(**values), {"link_id": link_id, "expected": expected})
    return moved.rowcount == 1


async def tallies(conn: AsyncConnection, link_ids: Sequence[str]) -> dict[str, Tally]:
    """Each link's paid intents, counted and summed (links without one are left out)."""
    if not link_ids:
        return {}
    query = (
        select(intents.c.payment_link_id, func.count(), func.coalesce(func.sum(intents.c.amount), 0))
        .where(
            intents.c.payment_link_id.in_(list(link_ids)),
            intents.c.status.in_([status.value for status in PAID]),
        )
        .group_by(intents.c.payment_link_id)
    )
    return {str(row[0]): Tally(int(row[1]), int(row[2])) for row in await conn.execute(query)}


async def payments(conn: AsyncConnection, link_id: str, limit: int) -> list[LinkPayment]:
    """The intents the link's page made, newest first."""
    query = (
        select(intents.c.id, intents.c.status, intents.c.provider, intents.c.created_at)
        .where(intents.c.payment_link_id == link_id)
        .order_by(intents.c.id.desc())
        .limit(limit)
    )
    return [LinkPayment(row[0], row[1], row[2], row[3]) for row in await conn.execute(query)]


async def expired_ids(conn: AsyncConnection, now: datetime, limit: int) -> list[str]:
    """ACTIVE links whose expires_at has passed (the worker's sweep)."""
    query = (
        select(links.c.id)
        .where(links.c.status == LinkStatus.ACTIVE.value, links.c.expires_at <= now)
        .order_by(links.c.expires_at)
        .limit(limit)
    )
    return [str(row[0]) for row in await conn.execute(query)]
