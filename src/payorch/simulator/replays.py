"""The replay store of every simulated provider's API (docs/providers.md, "A provider's
simulator"): the first answer given under a request's key (Idempotency-Key and the like) is kept,
so the same request under that key again gets it back, and another request under it is refused.

A fingerprint says what makes two requests the same (a provider chooses: path and body, or the
path alone). Rows of the public owner go with the public purge (simulator/jobs.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import record_of
from payorch.db.tables.simulator import simulator_replays as replays
from payorch.jsontypes import JsonObject

KEY_LENGTH = 255  # longer keys are cut to this


@dataclass(frozen=True, slots=True)
class Replay:
    """A kept first answer: what request it answered, and the answer."""

    fingerprint: str
    status_code: int
    body: JsonObject | list[JsonObject]


def fingerprint_of(*parts: bytes) -> str:
    return hashlib.sha256(b"\n".join(parts)).hexdigest()


_FIRST = select(replays.c.fingerprint, replays.c.status_code, replays.c.body).where(
    replays.c.provider == bindparam("provider"),
    replays.c.owner == bindparam("owner"),
    replays.c.key == bindparam("key"),
)


async def first_answer(conn: AsyncConnection, provider: str, owner: str, key: str) -> Replay | None:
    """The answer kept under ``owner``'s ``key`` at ``provider`` (None: the key is new)."""
    params = {"provider": provider, "owner": owner, "key": key[:KEY_LENGTH]}
    row = (await conn.execute(_FIRST, params)).mappings().first()
    return record_of(Replay, row) if row is not None else None


_KEEP = insert(replays)


async def keep(
    conn: AsyncConnection, provider: str, owner: str, key: str, replay: Replay, now: datetime
) -> None:
    """Keep the first answer under ``key``; raises IntegrityError when a concurrent request
    kept one first (its transaction then holds nothing of this one)."""
    await conn.execute(
        _KEEP,
        {
            "provider": provider,
            "owner": owner,
            "key": key[:KEY_LENGTH],
            "fingerprint": replay.fingerprint,
            "status_code": replay.status_code,
            "body": replay.body,
            "created_at": now,
        },
    )


async def forget_older_than(conn: AsyncConnection, owner: str, before: datetime) -> int:
    """Delete ``owner``'s kept answers made before ``before``; how many went."""
    gone = await conn.execute(delete(replays).where(replays.c.owner == owner, replays.c.created_at < before))
    return gone.rowcount
