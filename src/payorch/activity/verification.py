"""Verify the chains (``payorch activity verify``): walk each application's entries in seq order,
a batch at a time (each batch a short read of its own, so memory stays bounded however long the
chain), recompute each entry's hash (payorch.activity.chain.content_hash), check that each entry
links to the one before it with no seq missing, and that the chain ends at its head.

Where it starts: at seq 1 after GENESIS, or, once retention removed the start of the chain, at
the seq and previous hash the latest ``activity.retention_applied`` entry names (an entry of the
chain itself, so the cut is as tamper-evident as any change). The first entry that does not match
is named with what is wrong:

- ``content changed``: its hash is not the hash of its content (or, when the entry after it is
  intact but links to another hash, its content and hash were both rewritten);
- ``missing before``: seqs are missing before it, or the entry it links to is not in the log;
- ``out of order``: it links to an entry that is elsewhere in the chain (seqs swapped);
- ``head mismatch``: the chain ends before its head's seq (its last entries removed) or at
  another hash than the head's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, TypeAlias

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import repository
from payorch.activity.chain import GENESIS, entry_hash
from payorch.activity.records import Entry, Filters, Head

Reading: TypeAlias = Callable[[], AbstractAsyncContextManager[AsyncConnection]]

RETENTION_ACTION = "activity.retention_applied"
BATCH = 5000  # entries a read: what verification holds at once

Problem = Literal["content changed", "missing before", "out of order", "head mismatch"]


@dataclass(frozen=True, slots=True)
class Verified:
    """An application's chain matched: ``entries`` entries from seq ``first_seq`` to its head."""

    application_id: str
    entries: int
    first_seq: int
    head: Head


@dataclass(frozen=True, slots=True)
class Broken:
    """The first entry of an application's chain that does not match (``entry_id`` None when it
    is missing: the head names a seq no entry has)."""

    application_id: str
    seq: int
    entry_id: str | None
    problem: Problem
    detail: str


async def chain_heads(reading: Reading, application_id: str | None) -> list[Head]:
    """Each application's head (one application's, or every one's); an application without a
    head row is taken as an empty chain, so entries without a head are found too."""
    async with reading() as conn:
        return await repository.heads_of_applications(conn, application_id)


async def _start(reading: Reading, head: Head) -> tuple[int, str]:
    """Where the chain starts: (first seq, the previous hash it links to)."""
    async with reading() as conn:
        cut = await repository.latest_of_action(conn, head.application_id, RETENTION_ACTION, head.seq)
    if cut is None:
        return 1, GENESIS
    through, anchor = cut.changes.get("removed_through_seq"), cut.changes.get("previous_hash")
    if not isinstance(through, int) or not isinstance(anchor, str):
        return 1, GENESIS  # not a retention cut payorch wrote: the chain is checked from its start
    return through + 1, anchor


async def _explained(reading: Reading, entry: Entry, expected: str, before: Entry | None) -> Broken:
    """Why ``entry`` does not link to ``expected`` (the hash of the entry before it)."""
    if entry_hash(entry) == entry.hash:
        if before is not None:  # intact itself: the entry before it was rewritten, hash and all
            return Broken(
                before.application_id,
                before.seq,
                before.id,
                "content changed",
                f"its stored hash was rewritten: the next entry (seq {entry.seq}) links to another",
            )
        return Broken(
            entry.application_id,
            entry.seq,
            entry.id,
            "missing before",
            "it does not link to the start of the chain (GENESIS or the retention cut)",
        )
    async with reading() as conn:
        follows = await repository.seq_of_hash(conn, entry.application_id, entry.previous_hash)
    if follows is None:
        return Broken(
            entry.application_id,
            entry.seq,
            entry.id,
            "missing before",
            "the entry it links to is not in the log",
        )
    written = f", written as seq {follows + 1}" if entry_hash(entry, follows + 1) == entry.hash else ""
    return Broken(
        entry.application_id,
        entry.seq,
        entry.id,
        "out of order",
        f"it links to the entry now at seq {follows}, not to seq {entry.seq - 1}{written}",
    )


async def verify_chain(reading: Reading, head: Head, batch: int = BATCH) -> Verified | Broken:
    """Walk ``head``'s application's chain up to ``head`` (entries appended meanwhile are left
    for the next run); the first entry that does not match, or how many did."""
    first_seq, expected = await _start(reading, head)
    filters = Filters(head.application_id)
    next_seq, count, before = first_seq, 0, None
    while next_seq <= head.seq:
        async with reading() as conn:
            found = await repository.oldest_after(
                conn, filters, after_seq=next_seq - 1, upto_seq=head.seq, limit=batch
            )
        if not found:
            break
        for entry in found:
            if entry.seq != next_seq:
                missing = str(next_seq) if entry.seq == next_seq + 1 else f"{next_seq} to {entry.seq - 1}"
                return Broken(
                    entry.application_id, entry.seq, entry.id, "missing before", f"seq {missing} missing"
                )
            if entry.previous_hash != expected:
                return await _explained(reading, entry, expected, before)
            if entry_hash(entry) != entry.hash:
                return Broken(
                    entry.application_id,
                    entry.seq,
                    entry.id,
                    "content changed",
                    "its hash is not the hash of its content",
                )
            expected, next_seq, count, before = entry.hash, next_seq + 1, count + 1, entry
    last = next_seq - 1
    if last < head.seq:
        missing = str(head.seq) if last + 1 == head.seq else f"{last + 1} to {head.seq}"
        after = f" after seq {last} ({before.id})" if before is not None else ""
        return Broken(
            head.application_id,
            last + 1,
            None,
            "head mismatch",
            f"the chain ends{after} but its head is at seq {head.seq}: seq {missing} missing",
        )
    if expected != head.hash:
        return Broken(
            head.application_id,
            last,
            before.id if before is not None else None,
            "head mismatch",
            f"the chain ends at hash {expected} but its head holds {head.hash or 'nothing (no head)'}",
        )
    return Verified(head.application_id, count, first_seq, head)


async def verify(
    reading: Reading, application_id: str | None, batch: int = BATCH
) -> AsyncIterator[Verified | Broken]:
    """Each application's chain (or one's), in application id order."""
    for head in await chain_heads(reading, application_id):
        yield await verify_chain(reading, head, batch)
