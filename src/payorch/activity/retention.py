"""Retention of the activity log: entries older than PAYORCH_ACTIVITY_RETENTION_DAYS are deleted
from the start of each application's chain (worker job ``activity-retention``). The only delete
of an entry there is: the service has no other.

The chain stays verifiable. Before anything is deleted, an ``activity.retention_applied`` entry
is appended (in the head's lock, like any entry) naming the cut: ``removed_through_seq`` (the
last seq removed) and ``previous_hash`` (the hash the first remaining entry links to).
Verification starts from the latest such entry's cut (payorch.activity.verification), so the cut
is itself in the chain: removing more entries, or moving the cut, breaks it like any change.

- The cut is the application's first entry at or after the cutoff (its (application_id, at)
  index): everything before it goes, so what remains is always a whole tail of the chain, even
  where a clock stepped back.
- Bounded: deleted by seq ranges of ``batch`` entries, one short transaction each; the job
  calls again at once while it deleted something, so a backlog drains in small steps.
- Idempotent: a run that finds no new cut appends nothing; one interrupted between the cut and
  the deletes finishes them on the next run (rows below the cut are outside the chain already).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import repository
from payorch.activity.records import Actor, Change, Head
from payorch.activity.service import record
from payorch.activity.verification import RETENTION_ACTION
from payorch.clock import Clock
from payorch.runtime import Runtime

ACTOR = Actor("system", "activity-retention")
DEFAULT_BATCH = 10_000


async def cut(conn: AsyncConnection, clock: Clock, head: Head, cutoff: datetime) -> int | None:
    """In one transaction: the application's new cut (the seq below which entries go) if entries
    before ``cutoff`` remain above the last cut, with its ``activity.retention_applied`` entry;
    else the last cut (None: never cut)."""
    application_id = head.application_id
    seq, head_hash = await repository.lock_head(conn, application_id, clock.now())
    last = await repository.latest_of_action(conn, application_id, RETENTION_ACTION, seq)
    cut_before = None
    if last is not None and isinstance(last.changes.get("removed_through_seq"), int):
        cut_before = int(str(last.changes["removed_through_seq"])) + 1
    young = await repository.first_seq_at_or_after(conn, application_id, cutoff)
    keep_from = seq + 1 if young is None else young
    if keep_from <= (cut_before or 1):
        return cut_before  # nothing older than the period above the last cut
    kept = await repository.entry_at(conn, application_id, keep_from)
    anchor = head_hash if kept is None else kept.previous_hash
    await record(
        conn,
        clock,
        Change(
            application_id=application_id,
            actor=ACTOR,
            action=RETENTION_ACTION,
            resource_type="activity_log",
            resource_id=application_id,
            changes={"removed_through_seq": keep_from - 1, "previous_hash": anchor},
        ),
    )
    return keep_from


class ApplyActivityRetention:
    """Delete activity entries older than PAYORCH_ACTIVITY_RETENTION_DAYS from the start of each
    chain, ``batch`` entries a transaction."""

    name = "activity-retention"
    interval = 3600.0

    def __init__(self, batch: int = DEFAULT_BATCH) -> None:
        self.batch = batch

    async def run_once(self, runtime: Runtime) -> int:
        cutoff = runtime.clock.now() - timedelta(days=runtime.settings.activity_retention_days)
        async with runtime.phases.reading() as conn:
            heads = await repository.heads_of_applications(conn, None)
        deleted = 0
        for head in heads:
            if head.seq == 0:
                continue
            async with runtime.phases.transaction() as conn:
                below = await cut(conn, runtime.clock, head, cutoff)
            if below is None:
                continue
            async with runtime.phases.transaction() as conn:
                lowest = await repository.lowest_seq(conn, head.application_id)
                if lowest is not None and lowest < below:
                    deleted += await repository.remove_before(
                        conn, head.application_id, from_seq=lowest, below_seq=min(below, lowest + self.batch)
                    )
        return deleted
