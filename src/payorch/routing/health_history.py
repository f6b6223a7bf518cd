"""Provider health history (docs/routing.md, "Health history"): what the routing page shows of
each provider's health over the last hour and day.

Written only when something happens, never on the common path: a health key's transitions
(``failed`` made it skipped, ``succeeded`` made it available again; providers/health.py says
when, atomically on Redis so one replica writes each) and a connector's provider call failures,
counted in one row per minute. Each write also deletes the rows older than ``KEEP``, so the
table holds at most two days whatever the tenant does. A key shared by every connector of a
provider and mode (SANDBOX, PRODUCTION) has its transitions stored once, without tenant.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.connectors.records import Connector
from payorch.db import Phases
from payorch.db.tables.routing import provider_health_events as events
from payorch.providers.health import health_key

log = logging.getLogger("payorch.routing")

KEEP = timedelta(days=2)  # longer than the day the page shows


class HealthEvent(StrEnum):
    SKIPPED = "skipped"  # the failure that reached the threshold
    AVAILABLE = "available"  # a call succeeded while skipped (a trial, or an explicit provider)
    FAILED = "failed"  # provider call failures of one connector in one minute (``count``)


def key_of(connector: Connector) -> str:
    return health_key(connector.provider, connector.mode.value, connector.id)


def _owner(connector: Connector) -> dict[str, str | None]:
    """A transition's tenant: none when the key is shared (health_key)."""
    shared = connector.mode.value != "MOCK"
    return {
        "application_id": None if shared else connector.application_id,
        "connector_id": None if shared else connector.id,
    }


class HealthJournal:
    """Writes the history in a phase of its own (routing/attempts.py, between provider calls).
    A failed write is logged, never raised: the checkout matters more than its history."""

    __slots__ = ("_phases", "_clock")

    def __init__(self, phases: Phases, clock: Clock) -> None:
        self._phases = phases
        self._clock = clock

    async def failed(self, connector: Connector, tripped: bool) -> None:
        await self._write(connector, HealthEvent.FAILED, tripped)

    async def available(self, connector: Connector) -> None:
        await self._write(connector, HealthEvent.AVAILABLE, True)

    async def _write(self, connector: Connector, kind: HealthEvent, transition: bool) -> None:
        now = self._clock.now()
        try:
            async with self._phases.transaction() as conn:
                await conn.execute(delete(events).where(events.c.at < now - KEEP))
                if kind is HealthEvent.FAILED:
                    await _count_failure(conn, connector, now)
                if transition:
                    await _insert(
                        conn, connector, HealthEvent.SKIPPED if kind is HealthEvent.FAILED else kind, now
                    )
        except SQLAlchemyError as exc:
            log.warning("provider health history not written (%s): %s", connector.provider, exc)


async def _insert(conn: AsyncConnection, connector: Connector, kind: HealthEvent, at: datetime) -> None:
    values = {"health_key": key_of(connector), "provider": connector.provider, "kind": kind.value}
    await conn.execute(insert(events).values(**values, **_owner(connector), count=1, at=at))


async def _count_failure(conn: AsyncConnection, connector: Connector, now: datetime) -> None:
    """One row per connector and minute. Two replicas may both insert the minute's row; the
    counts still add up."""
    minute = now.replace(second=0, microsecond=0)
    found = await conn.execute(
        update(events)
        .where(events.c.connector_id == connector.id, events.c.kind == "failed", events.c.at == minute)
        .values(count=events.c.count + 1)
    )
    if found.rowcount == 0:
        await conn.execute(
            insert(events).values(
                health_key=key_of(connector),
                application_id=connector.application_id,
                connector_id=connector.id,
                provider=connector.provider,
                kind=HealthEvent.FAILED.value,
                count=1,
                at=minute,
            )
        )


@dataclass(frozen=True, slots=True)
class HealthWindow:
    skipped: int  # times it became skipped in the window
    unavailable: timedelta  # of the window, the time spent skipped
    errors: int  # failed provider calls (by whole minutes)


def unavailable_time(
    transitions: Sequence[tuple[str, datetime]], since: datetime, now: datetime
) -> timedelta:
    """Time skipped within [since, now]: from each ``skipped`` to the next ``available`` (or now).
    An ``available`` first means the ``skipped`` before it was purged: skipped from the start."""
    total = timedelta()
    start: datetime | None = None
    for index, (kind, at) in enumerate(transitions):
        if kind == HealthEvent.SKIPPED.value and start is None:
            start = at
        elif kind == HealthEvent.AVAILABLE.value and (start is not None or index == 0):
            total += _overlap(start or since, at, since, now)
            start = None
    if start is not None:
        total += _overlap(start, now, since, now)
    return total


def _overlap(begin: datetime, end: datetime, since: datetime, now: datetime) -> timedelta:
    return max(timedelta(), min(end, now) - max(begin, since))


async def health_windows(
    conn: AsyncConnection, connector: Connector, now: datetime, spans: Sequence[timedelta]
) -> list[HealthWindow]:
    """The connector's health over each span up to ``now``."""
    transitions = [
        (kind, at)
        for kind, at in (
            await conn.execute(
                select(events.c.kind, events.c.at)
                .where(events.c.health_key == key_of(connector), events.c.kind != "failed")
                .order_by(events.c.at, events.c.id)
            )
        ).all()
    ]
    found = []
    for span in spans:
        since = now - span
        errors = await conn.scalar(
            select(func.coalesce(func.sum(events.c.count), 0)).where(
                events.c.connector_id == connector.id, events.c.kind == "failed", events.c.at >= since
            )
        )
        skipped = sum(1 for kind, at in transitions if kind == HealthEvent.SKIPPED.value and at >= since)
        found.append(HealthWindow(skipped, unavailable_time(transitions, since, now), int(errors or 0)))
    return found
