"""Write an entry: ``record`` in the same transaction as the change it describes, so the change
and its entry commit or roll back together."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import repository
from payorch.activity.chain import content_hash
from payorch.activity.records import Change, Entry
from payorch.clock import Clock
from payorch.ids import new_id


async def record(conn: AsyncConnection, clock: Clock, change: Change) -> Entry:
    """Appends ``change`` to its application's chain. Locks the chain's head until the
    transaction ends: call it last in the transaction, after the change itself."""
    now = clock.now()
    seq, previous = await repository.lock_head(conn, change.application_id, now)
    entry_id = new_id("act")
    digest = content_hash(
        previous_hash=previous,
        id=entry_id,
        application_id=change.application_id,
        seq=seq + 1,
        at=now,
        actor=change.actor,
        action=change.action,
        resource_type=change.resource_type,
        resource_id=change.resource_id,
        outcome=change.outcome,
        origin=change.origin,
        changes=change.changes,
    )
    entry = Entry(
        id=entry_id,
        application_id=change.application_id,
        seq=seq + 1,
        at=now,
        actor=change.actor,
        action=change.action,
        resource_type=change.resource_type,
        resource_id=change.resource_id,
        outcome=change.outcome,
        origin=change.origin,
        changes=change.changes,
        previous_hash=previous,
        hash=digest,
    )
    await repository.append(conn, entry)
    return entry
