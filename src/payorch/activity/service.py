"""Write an entry: ``record`` in the same transaction as the change it describes, so the change
and its entry commit or roll back together."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import repository
from payorch.activity.actors import actor_of
from payorch.activity.chain import entry_hash
from payorch.activity.origin import current_origin
from payorch.activity.records import Change, Entry, Origin
from payorch.auth.service import Caller
from payorch.clock import Clock
from payorch.ids import new_id


async def record(conn: AsyncConnection, clock: Clock, change: Change) -> Entry:
    """Appends ``change`` to its application's chain. Locks the chain's head until the
    transaction ends: call it last in the transaction, after the change itself. A change without
    an origin takes the request's (payorch.activity.origin; all None outside a request)."""
    if change.origin == Origin():
        change = replace(change, origin=current_origin())
    now = clock.now()
    seq, previous = await repository.lock_head(conn, change.application_id, now)
    entry = Entry(
        id=new_id("act"),
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
        hash="",  # set below, from the rest
    )
    entry = replace(entry, hash=entry_hash(entry))
    await repository.append(conn, entry)
    return entry


async def record_by(
    conn: AsyncConnection,
    clock: Clock,
    caller: Caller,
    action: str,
    resource: tuple[str, str],
    changes: Mapping[str, object] | None = None,
) -> Entry:
    """``record`` of a change ``caller`` made to ``resource`` (its type and id), in the
    request's origin: the common case of the services' change sites."""
    return await record(
        conn,
        clock,
        Change(
            application_id=caller.application_id,
            actor=actor_of(caller),
            action=action,
            resource_type=resource[0],
            resource_id=resource[1],
            changes=dict(changes or {}),
        ),
    )
