"""Entries written as the change sites write them (payorch.activity.service.record, each in a
transaction of its own), and the direct database edits the tamper tests make."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from sqlalchemy import delete, update

from payorch.activity.records import Actor, Change, Entry, Origin
from payorch.activity.service import record
from payorch.auth.service import Caller
from payorch.clock import FrozenClock
from payorch.db.tables.activity import activity_log
from payorch.runtime import Runtime

ACTIONS = ("refund.created", "connector.updated", "api_key.revoked", "user.role_changed")


async def write_entries(runtime: Runtime, application_id: str, count: int) -> list[Entry]:
    """``count`` entries of a person, a key and the service in turn, a second apart."""
    assert isinstance(runtime.clock, FrozenClock)
    actors = (
        Actor("user", "usr_0000000000000000000000000a", "ana@shop.example"),
        Actor("api_key", "key_0000000000000000000000000b"),
        Actor("system", "reconciliation"),
    )
    written = []
    for n in range(count):
        runtime.clock.advance(1)
        change = Change(
            application_id=application_id,
            actor=actors[n % len(actors)],
            action=ACTIONS[n % len(ACTIONS)],
            resource_type=ACTIONS[n % len(ACTIONS)].split(".")[0],
            resource_id=f"res_{n}",
            origin=Origin("203.0.113.7", "Mozilla/5.0 =cmd", f"req_{n}"),
            changes={"amount": n, "note": f"n{n}"},
        )
        async with runtime.database.transaction() as conn:
            written.append(await record(conn, runtime.clock, change))
    return written


async def edit(runtime: Runtime, entry: Entry, **values: object) -> None:
    async with runtime.database.transaction() as conn:
        await conn.execute(update(activity_log).where(activity_log.c.id == entry.id).values(**values))


async def remove(runtime: Runtime, entry: Entry) -> None:
    async with runtime.database.transaction() as conn:
        await conn.execute(delete(activity_log).where(activity_log.c.id == entry.id))


async def swap_seqs(runtime: Runtime, one: Entry, other: Entry) -> None:
    """Reorder: the two rows exchange their seq (through -1: (application_id, seq) is unique)."""
    async with runtime.database.transaction() as conn:
        for entry, seq in ((one, -1), (other, one.seq), (one, other.seq)):
            await conn.execute(update(activity_log).where(activity_log.c.id == entry.id).values(seq=seq))


def holding(runtime: Runtime, scopes: frozenset[str]) -> Callable[[str | None], Awaitable[Caller]]:
    """The runtime's key check, with the key taken as holding ``scopes`` (a restricted key or a
    role's session, whoever builds the caller from what is stored): monkeypatch it in."""
    real = runtime.authenticator.authenticate

    async def authenticate(authorization: str | None) -> Caller:
        return replace(await real(authorization), scopes=scopes)

    return authenticate
