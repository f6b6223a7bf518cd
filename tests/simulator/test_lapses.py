"""``Lapses``, the clock of a simulator's holds (simulator/lapses.py), on rows kept in memory: the
clock control moves an owner's holds nearer their end and lapses those then past it (their
references, and what they wrote sent after the commit); the worker's pass lapses any owner's
holds past their end, a batch at a time."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

from payorch.clock import FrozenClock
from payorch.simulator.lapses import Lapses, end_in
from payorch.simulator.outbox.records import Notifier

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Hold:
    id: str
    owner: str
    ends_at: datetime
    lapsed: bool = False


class Rows:
    def __init__(self, *holds: Hold) -> None:
        self.rows = {hold.id: hold for hold in holds}
        self.written: list[str] = []

    async def find(self, conn: Any, owner: str | None, before: datetime | None, limit: int) -> list[Hold]:
        held = [h for h in self.rows.values() if not h.lapsed and owner in (None, h.owner)]
        held = [h for h in held if before is None or h.ends_at <= before]
        return sorted(held, key=lambda h: h.ends_at)[:limit]

    async def move(self, conn: Any, hold: Hold, ends_at: datetime) -> Hold:
        self.rows[hold.id] = replace(hold, ends_at=ends_at)
        return self.rows[hold.id]

    async def move_saved(self, conn: Any, hold: Hold) -> None:
        self.rows[hold.id] = hold

    async def lapse(self, conn: Any, public_url: str, hold: Hold, now: datetime) -> list[Any]:
        self.rows[hold.id] = replace(hold, lapsed=True)
        self.written.append(hold.id)
        return []  # nothing to send: the outbox is not what is under test


def lapses(rows: Rows, batch: int = 50) -> Lapses[Hold]:
    notifier = Notifier(provider="provider_x", sign=lambda *_: {})
    return Lapses(
        notifier, rows.find, lambda h: h.ends_at, rows.move, rows.lapse, lambda h: h.id, batch=batch
    )


async def test_the_clock_moves_an_owners_holds_and_lapses_those_past_their_end() -> None:
    rows = Rows(
        Hold("soon", "app_1", NOW + timedelta(hours=1)),
        Hold("later", "app_1", NOW + timedelta(days=3)),
        Hold("other", "app_2", NOW + timedelta(minutes=1)),
    )
    moved = await lapses(rows).advance(None, FrozenClock(NOW), "", "app_1", 2 * 3600)
    assert moved.references == ["soon"]
    assert rows.written == ["soon"]
    assert rows.rows["later"].ends_at == NOW + timedelta(days=3, hours=-2)
    assert rows.rows["other"].ends_at == NOW + timedelta(minutes=1)  # another owner's: untouched


async def test_the_workers_pass_lapses_any_owners_holds_past_their_end_a_batch_at_a_time() -> None:
    rows = Rows(
        Hold("a", "app_1", NOW - timedelta(hours=2)),
        Hold("b", "app_2", NOW - timedelta(hours=1)),
        Hold("c", "app_1", NOW + timedelta(hours=1)),
    )

    @asynccontextmanager
    async def transaction() -> Any:
        yield None

    phases = SimpleNamespace(transaction=transaction)
    runtime = SimpleNamespace(clock=FrozenClock(NOW), settings=SimpleNamespace(public_url=""))
    assert await lapses(rows, batch=1).lapse_due(runtime, phases) == 1
    assert await lapses(rows, batch=1).lapse_due(runtime, phases) == 1
    assert await lapses(rows, batch=1).lapse_due(runtime, phases) == 0
    assert rows.written == ["a", "b"]


async def test_a_rows_end_field_gives_the_clock_its_end_and_its_move_saved() -> None:
    saved: list[Hold] = []

    async def save(conn: Any, hold: Hold) -> None:
        saved.append(hold)

    ends_at, move = end_in("ends_at", save)
    hold = Hold("h", "app_1", NOW + timedelta(days=7))
    assert ends_at(hold) == NOW + timedelta(days=7)
    moved = await move(None, hold, NOW + timedelta(days=1))
    assert moved == replace(hold, ends_at=NOW + timedelta(days=1)) and saved == [moved]

    rows = Rows(hold)
    clock = Lapses(Notifier(provider="provider_x", sign=lambda *_: {}), rows.find, *end_in("ends_at", rows.move_saved), rows.lapse, lambda h: h.id)
    assert (await clock.advance(None, FrozenClock(NOW), "", "app_1", 7 * 86400)).references == ["h"]
