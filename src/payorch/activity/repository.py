"""SQL of the activity domain: append to an application's chain. There is no update or delete of
an entry; retention removes whole old entries in order (payorch.activity.retention)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import RowMapping, Select, bindparam, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.chain import GENESIS
from payorch.activity.records import Actor, Entry, Filters, Head, Origin
from payorch.db.tables.activity import activity_heads, activity_log
from payorch.db.tables.foundation import applications

_HEAD = (
    select(activity_heads.c.seq, activity_heads.c.hash)
    .where(activity_heads.c.application_id == bindparam("application_id"))
    .with_for_update()
)


async def lock_head(conn: AsyncConnection, application_id: str, now: datetime) -> tuple[int, str]:
    """The application's last seq and hash, its head row locked until the transaction ends (on
    SQLite the writer's lock already orders the transactions). The head is made by the
    application's first entry only: every other entry pays one statement here, not two."""
    params = {"application_id": application_id}
    row = (await conn.execute(_HEAD, params)).first()
    if row is None:
        dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
        await conn.execute(
            dialect.insert(activity_heads)
            .values(application_id=application_id, seq=0, hash=GENESIS, updated_at=now)
            .on_conflict_do_nothing()  # another transaction's first entry made it meanwhile
        )
        row = (await conn.execute(_HEAD, params)).one()
    return int(row.seq), str(row.hash)


async def append(conn: AsyncConnection, entry: Entry) -> None:
    await conn.execute(
        insert(activity_log).values(
            id=entry.id,
            application_id=entry.application_id,
            seq=entry.seq,
            at=entry.at,
            actor_type=entry.actor.type,
            actor_id=entry.actor.id,
            actor_email=entry.actor.email,
            action=entry.action,
            resource_type=entry.resource_type,
            resource_id=entry.resource_id,
            outcome=entry.outcome,
            origin_ip=entry.origin.ip,
            origin_user_agent=entry.origin.user_agent,
            request_id=entry.origin.request_id,
            changes=entry.changes,
            previous_hash=entry.previous_hash,
            hash=entry.hash,
        )
    )
    await conn.execute(
        update(activity_heads)
        .where(activity_heads.c.application_id == entry.application_id)
        .values(seq=entry.seq, hash=entry.hash, updated_at=entry.at)
    )


# Reads. Every read is of one application's chain, by its (application_id, seq) unique index or
# a filter's (application_id, column, seq) index; newest first for the list, oldest first for
# verification, exports and retention.


def _entry(row: RowMapping) -> Entry:
    return Entry(
        id=row["id"],
        application_id=row["application_id"],
        seq=int(row["seq"]),
        at=row["at"],
        actor=Actor(row["actor_type"], row["actor_id"], row["actor_email"]),
        action=row["action"],
        resource_type=row["resource_type"],
        resource_id=row["resource_id"],
        outcome=row["outcome"],
        origin=Origin(row["origin_ip"], row["origin_user_agent"], row["request_id"]),
        changes=row["changes"],
        previous_hash=row["previous_hash"],
        hash=row["hash"],
    )


def _filtered(query: Select[*tuple[object, ...]], found: Filters) -> Select[*tuple[object, ...]]:
    log = activity_log.c
    conditions = [log.application_id == found.application_id]
    if found.actor_id is not None:
        conditions.append(log.actor_id == found.actor_id)
    if found.action is not None:
        conditions.append(log.action == found.action)
    if found.resource_id is not None:
        conditions.append(log.resource_id == found.resource_id)
    if found.from_ is not None:
        conditions.append(log.at >= found.from_)
    if found.to is not None:
        conditions.append(log.at < found.to)
    return query.where(*conditions)


async def newest(
    conn: AsyncConnection, filters: Filters, *, before_seq: int | None, limit: int
) -> list[Entry]:
    """The entries matching ``filters``, newest first (by seq, the chain's order), below
    ``before_seq``."""
    query = _filtered(select(activity_log), filters)
    if before_seq is not None:
        query = query.where(activity_log.c.seq < before_seq)
    query = query.order_by(activity_log.c.seq.desc()).limit(limit)
    return [_entry(row) for row in (await conn.execute(query)).mappings()]


async def oldest_after(
    conn: AsyncConnection, filters: Filters, *, after_seq: int, upto_seq: int | None, limit: int
) -> list[Entry]:
    """Up to ``limit`` entries matching ``filters`` with seq in (after_seq, upto_seq], oldest
    first: one batch of a walk along the chain (verification, exports)."""
    query = _filtered(select(activity_log), filters).where(activity_log.c.seq > after_seq)
    if upto_seq is not None:
        query = query.where(activity_log.c.seq <= upto_seq)
    query = query.order_by(activity_log.c.seq).limit(limit)
    return [_entry(row) for row in (await conn.execute(query)).mappings()]


async def heads_of_applications(conn: AsyncConnection, application_id: str | None) -> list[Head]:
    """Each application's head (one application's, or every one's), by application id. An
    application without a head row has none: seq 0 and GENESIS if it has no entry, else its last
    entry's seq and an empty hash (no head to match, which verification reports)."""
    last = (
        select(func.max(activity_log.c.seq))
        .where(activity_log.c.application_id == applications.c.id)
        .scalar_subquery()
    )
    query = select(
        applications.c.id, activity_heads.c.seq, activity_heads.c.hash, last.label("last")
    ).outerjoin(activity_heads, activity_heads.c.application_id == applications.c.id)
    if application_id is not None:
        query = query.where(applications.c.id == application_id)
    found = []
    for row in await conn.execute(query.order_by(applications.c.id)):
        if row.seq is not None:
            found.append(Head(row.id, int(row.seq), str(row.hash)))
        else:
            found.append(Head(row.id, 0, GENESIS) if row.last is None else Head(row.id, int(row.last), ""))
    return found


async def latest_of_action(
    conn: AsyncConnection, application_id: str, action: str, upto_seq: int
) -> Entry | None:
    """The application's last entry of ``action`` at or below ``upto_seq``."""
    row = (
        (
            await conn.execute(
                select(activity_log)
                .where(
                    activity_log.c.application_id == application_id,
                    activity_log.c.action == action,
                    activity_log.c.seq <= upto_seq,
                )
                .order_by(activity_log.c.seq.desc())
                .limit(1)
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else _entry(row)


async def seq_of_hash(conn: AsyncConnection, application_id: str, digest: str) -> int | None:
    """The seq of the application's entry whose hash is ``digest`` (no index: asked only once a
    chain is found broken, to say how)."""
    found = await conn.scalar(
        select(activity_log.c.seq).where(
            activity_log.c.application_id == application_id, activity_log.c.hash == digest
        )
    )
    return None if found is None else int(found)


async def first_seq_at_or_after(conn: AsyncConnection, application_id: str, moment: datetime) -> int | None:
    """The seq of the application's first entry at or after ``moment`` (its (application_id, at)
    index)."""
    found = await conn.scalar(
        select(func.min(activity_log.c.seq)).where(
            activity_log.c.application_id == application_id, activity_log.c.at >= moment
        )
    )
    return None if found is None else int(found)


async def entry_at(conn: AsyncConnection, application_id: str, seq: int) -> Entry | None:
    row = (
        (
            await conn.execute(
                select(activity_log).where(
                    activity_log.c.application_id == application_id, activity_log.c.seq == seq
                )
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else _entry(row)


async def lowest_seq(conn: AsyncConnection, application_id: str) -> int | None:
    found = await conn.scalar(
        select(func.min(activity_log.c.seq)).where(activity_log.c.application_id == application_id)
    )
    return None if found is None else int(found)


async def remove_before(conn: AsyncConnection, application_id: str, *, from_seq: int, below_seq: int) -> int:
    """Retention only (payorch.activity.retention): delete the application's entries with seq in
    [from_seq, below_seq), the start of its chain. The service has no other delete."""
    deleted = await conn.execute(
        delete(activity_log).where(
            activity_log.c.application_id == application_id,
            activity_log.c.seq >= from_seq,
            activity_log.c.seq < below_seq,
        )
    )
    return int(deleted.rowcount)
