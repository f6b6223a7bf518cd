"""Provider health history (routing/health_history.py, docs/routing.md "Health history"): the
health stores say each transition once (in-process and Redis); the journal counts failures per
minute, stores a shared key's transitions without tenant, purges rows older than two days
(SQLite, PostgreSQL); unavailable time over a window."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from payorch.clock import FrozenClock
from payorch.connectors import service as connectors
from payorch.connectors.records import Connector
from payorch.db.tables.routing import provider_health_events as events
from payorch.providers.base import Mode
from payorch.providers.health import InProcessHealth, ProviderHealth
from payorch.routing.health_history import (
    HealthJournal,
    HealthWindow,
    health_windows,
    key_of,
    unavailable_time,
)
from payorch.runtime import Runtime
from tests.kit import mock_sandbox
from tests.providers.helpers import A, forget_redis_keys, redis_health, redis_prefix


@pytest.fixture(params=["in-process", "redis"])
async def store(request: pytest.FixtureRequest, clock: FrozenClock) -> AsyncIterator[ProviderHealth]:
    if request.param == "in-process":
        yield InProcessHealth(clock, threshold=2, skip_seconds=10)
        return
    prefix = redis_prefix()
    shared = await redis_health(clock, 2, 10, prefix)
    try:
        yield shared
    finally:
        await forget_redis_keys(shared, prefix)
        await shared.aclose()


async def test_each_transition_is_told_once(store: ProviderHealth, clock: FrozenClock) -> None:
    assert await store.failed("p:MOCK:c") is False
    assert await store.failed("p:MOCK:c") is True  # the threshold: skipped
    clock.advance(11)
    assert (await store.admit("p:MOCK:c")).trial
    assert await store.failed("p:MOCK:c") is False  # the trial failed: still skipped, no transition
    assert await store.succeeded("p:MOCK:c") is True  # available again
    assert await store.succeeded("p:MOCK:c") is False  # it already was
    assert await store.failed("p:MOCK:c") is False


T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_unavailable_time_within_the_window() -> None:
    since, now = at(0), at(60)
    assert unavailable_time([], since, now) == timedelta()
    pairs = [("skipped", at(-10)), ("available", at(5)), ("skipped", at(50)), ("available", at(52))]
    assert unavailable_time(pairs, since, now) == timedelta(minutes=7)  # 5 in the window, then 2
    assert unavailable_time([("skipped", at(30))], since, now) == timedelta(minutes=30)  # still skipped
    # Its skipped row purged: skipped since before the window.
    assert unavailable_time([("available", at(20))], since, now) == timedelta(minutes=20)
    # A second "skipped" (another process) does not restart the interval.
    assert unavailable_time(
        [("skipped", at(10)), ("skipped", at(20)), ("available", at(40))], since, now
    ) == (timedelta(minutes=30))
    assert unavailable_time([("skipped", at(-30)), ("available", at(-20))], since, now) == timedelta()


async def _a(runtime: Runtime) -> Connector:
    sandbox = await mock_sandbox(runtime)
    async with runtime.database.reading() as conn:
        found = await connectors.merchant_connectors(conn, sandbox.merchant_account_id)
    return next(c for c in found if c.provider == A)


async def _windows(runtime: Runtime, connector: Connector, clock: FrozenClock) -> list[HealthWindow]:
    async with runtime.database.reading() as conn:
        return await health_windows(conn, connector, clock.now(), [timedelta(hours=1), timedelta(days=1)])


async def test_failures_by_minute_and_the_purge(runtime: Runtime, clock: FrozenClock) -> None:
    connector = await _a(runtime)
    journal = HealthJournal(runtime.phases, clock)
    for tripped in (False, False, True):
        await journal.failed(connector, tripped)
    clock.advance(120)
    await journal.available(connector)
    mine = events.c.health_key == key_of(connector)  # the database is shared with other tests
    async with runtime.database.reading() as conn:
        rows = (
            await conn.execute(select(events.c.kind, events.c.count).where(mine).order_by(events.c.id))
        ).all()
    assert [tuple(r) for r in rows] == [("failed", 3), ("skipped", 1), ("available", 1)]
    assert await _windows(runtime, connector, clock) == [HealthWindow(1, timedelta(minutes=2), 3)] * 2

    clock.advance(3 * 86400)  # a write purges what is older than two days
    await journal.failed(connector, False)
    async with runtime.database.reading() as conn:
        assert await conn.scalar(select(func.count()).select_from(events).where(mine)) == 1
        assert (
            await conn.scalar(select(func.count()).where(events.c.at < clock.now() - timedelta(days=2))) == 0
        )
    assert await _windows(runtime, connector, clock) == [HealthWindow(0, timedelta(), 1)] * 2


async def test_a_shared_key_is_stored_once_without_tenant(runtime: Runtime, clock: FrozenClock) -> None:
    provider = f"{A}-{secrets.token_hex(3)}"  # a key of this test's own (the database is shared)
    mine = dataclasses.replace(await _a(runtime), mode=Mode.SANDBOX, provider=provider)
    theirs = dataclasses.replace(await _a(runtime), mode=Mode.SANDBOX, provider=provider)
    journal = HealthJournal(runtime.phases, clock)
    await journal.failed(mine, True)
    skipped = (events.c.kind == "skipped") & (events.c.provider == provider)
    async with runtime.database.reading() as conn:
        row = (await conn.execute(select(events).where(skipped))).one()
    assert (row.health_key, row.application_id, row.connector_id) == (f"{provider}:SANDBOX", None, None)
    clock.advance(60)
    # Another tenant's connector of that provider and mode sees the skip, not the other's error.
    assert (await _windows(runtime, theirs, clock))[0] == HealthWindow(1, timedelta(minutes=1), 0)
    assert (await _windows(runtime, mine, clock))[0] == HealthWindow(1, timedelta(minutes=1), 1)
