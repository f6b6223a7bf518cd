"""The clock of a simulator's holds that lapse with a notification (docs/providers.md,
``SimulatedHolds``): the clock control moves an owner's holds nearer their end, and those then past
it lapse at once; the worker's pass lets any owner's holds past their end lapse. A provider says
how its held rows are found, moved and lapsed; ``Lapses.holds(window_days)`` is its declaration."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Generic, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.db import Phases
from payorch.runtime import Runtime
from payorch.simulator.outbox.records import Notification, Notifier
from payorch.simulator.outbox.sender import after_commit, deliver_now
from payorch.simulator.simulated import Settlement, SimulatedHolds

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Held = TypeVar("Held")
Row = TypeVar("Row", bound="DataclassInstance")

# (conn, owner or None for anyone's, ending before or None for whenever, limit) -> held rows,
# locked for the transaction, the soonest end first.
FindHeld = Callable[[AsyncConnection, str | None, datetime | None, int], Awaitable[list[Held]]]
# (conn, the held row, its new end) -> the row saved with it.
MoveEnd = Callable[[AsyncConnection, Held, datetime], Awaitable[Held]]
# (conn, public_url, the held row, now) -> what its lapse wrote to send (the row saved lapsed).
Lapse = Callable[[AsyncConnection, str, Held, datetime], Awaitable[list[Notification]]]


@dataclass(frozen=True)
class Lapses(Generic[Held]):
    notifier: Notifier
    find: FindHeld[Held]
    ends_at: Callable[[Held], datetime]
    move: MoveEnd[Held]
    lapse: Lapse[Held]
    reference: Callable[[Held], str]  # the provider's id of a hold (the control's references)
    batch: int = 50  # holds the worker's pass lets lapse at a time
    most: int = 1000  # holds of one owner the clock control moves

    async def advance(
        self, conn: AsyncConnection, clock: Clock, public_url: str, owner: str, seconds: int
    ) -> Settlement:
        """The clock control: ``owner``'s holds ``seconds`` nearer their end; those then past it lapse."""
        now, lapsed, sent = clock.now(), [], []
        for held in await self.find(conn, owner, None, self.most):
            moved = await self.move(conn, held, self.ends_at(held) - timedelta(seconds=seconds))
            if now >= self.ends_at(moved):
                sent += await self.lapse(conn, public_url, moved, now)
                lapsed.append(self.reference(moved))
        return Settlement(lapsed, after_commit(self.notifier, sent))

    async def lapse_due(self, runtime: Runtime, phases: Phases) -> int:
        """The worker's pass: any owner's holds past their end lapse; what they wrote is sent here
        (no answer waits on it)."""
        async with phases.transaction() as conn:
            now, public_url = runtime.clock.now(), runtime.settings.public_url
            due = await self.find(conn, None, now, self.batch)
            sent = [n for held in due for n in await self.lapse(conn, public_url, held, now)]
        await deliver_now(runtime, phases, self.notifier, sent)
        return len(due)

    def holds(self, window_days: int) -> SimulatedHolds:
        return SimulatedHolds(advance=self.advance, window_days=window_days, lapse_due=self.lapse_due)


def end_in(
    field: str, save: Callable[[AsyncConnection, Row], Awaitable[None]]
) -> tuple[Callable[[Row], datetime], MoveEnd[Row]]:
    """``ends_at`` and ``move`` for held rows that are records with their end in ``field`` (set on
    every held row), saved with ``save``: ``Lapses(notifier, find, *end_in(...), lapse, reference)``."""

    def ends_at(held: Row) -> datetime:
        end = getattr(held, field)
        assert isinstance(end, datetime), f"a held row without its {field}"
        return end

    async def move(conn: AsyncConnection, held: Row, end: datetime) -> Row:
        moved = replace(held, **{field: end})
        await save(conn, moved)
        return moved

    return ends_at, move
