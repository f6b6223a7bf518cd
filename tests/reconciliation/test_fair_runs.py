"""Reconciliation runs shared between applications, through HTTP and the worker's job on SQLite
and PostgreSQL: a day no provider of the application answers about is refused naming the oldest
day accepted; an application has at most PAYORCH_RECONCILIATION_MAX_QUEUED_RUNS runs waiting;
the worker takes the next run round robin by application, so another application's run is taken
before one application's backlog is drained (and two workers never take the same run)."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from payorch.clock import FrozenClock
from payorch.reconciliation.job import ReconcileDays
from payorch.runtime import Runtime
from tests.dashboard.signing import csrf_of, sign_in
from tests.databases import own_database
from tests.kit import Sandbox, assert_error, mock_sandbox
from tests.providers.helpers import A

database_url = own_database  # the reconciliation job sweeps the database: this module gets its own
pytestmark = [pytest.mark.slow, pytest.mark.settings(reconciliation_max_queued_runs=3)]
DAY = 86_400


async def ask(client: httpx.AsyncClient, sandbox: Sandbox, day: date) -> httpx.Response:
    return await client.post(
        "/v1/reports/reconciliation", json={"date": day.isoformat()}, headers=sandbox.headers
    )


async def run_of(client: httpx.AsyncClient, sandbox: Sandbox, day: date) -> dict[str, Any] | None:
    answer = await client.get(
        "/v1/reports/reconciliation", params={"date": day.isoformat()}, headers=sandbox.headers
    )
    if answer.status_code == 404:
        return None
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["run"])


async def drain(runtime: Runtime) -> None:
    """Carry out every run waiting (another test's): each test starts with none."""
    while await ReconcileDays().run_once(runtime):
        pass


async def disable_all_but(client: httpx.AsyncClient, sandbox: Sandbox, provider: str) -> None:
    base = f"/v1/admin/merchant-accounts/{sandbox.merchant_account_id}/connectors"
    for connector in (await client.get(base, headers=sandbox.headers)).json()["items"]:
        if connector["provider"] != provider:
            changed = await client.patch(
                f"{base}/{connector['id']}", json={"enabled": False}, headers=sandbox.headers
            )
            assert changed.status_code == 200, changed.text


async def test_a_day_no_provider_answers_about_is_refused_naming_the_oldest_accepted(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    sandbox = await mock_sandbox(runtime)
    created = clock.now().date()
    await drain(runtime)  # the daily job queues yesterday only for an application made before it
    assert await run_of(client, sandbox, created - timedelta(days=1)) is None
    clock.advance(30 * DAY + 3600)
    # Provider C lists every day: the oldest day is the one the application was created on.
    for old in (date(1, 1, 1), created - timedelta(days=1)):
        error = assert_error(await ask(client, sandbox, old), 400, "VALIDATION_ERROR")
        expected = f"date: must be {created.isoformat()} or later (the day the application was created)"
        assert error["message"].startswith(expected), error
        assert error["details"]["errors"][0]["field"] == "date"
        assert await run_of(client, sandbox, old) is None  # nothing queued
    assert (await ask(client, sandbox, created)).status_code == 202
    await sign_in(client, sandbox)  # the dashboard's page offers no button for such a day
    page = await client.get(
        "/dashboard/reconciliation", params={"date": (created - timedelta(days=1)).isoformat()}
    )
    assert f"The oldest day that can be reconciled is {created.isoformat()} (the day" in page.text
    assert '<button type="submit">Reconcile' not in page.text
    assert "Nothing: this day cannot be reconciled." in page.text
    # With only provider A (its status answers for 7 days after a payment), a week back at most.
    await disable_all_but(client, sandbox, A)
    edge = clock.now() - timedelta(days=7)
    oldest = edge.date() + timedelta(days=1)  # the edge day's first hours are out of reach
    error = assert_error(await ask(client, sandbox, oldest - timedelta(days=1)), 400, "VALIDATION_ERROR")
    assert f"must be {oldest.isoformat()} or later" in error["message"], error
    assert "answers for 7 days back" in error["message"], error
    assert (await ask(client, sandbox, oldest)).status_code == 202
    later = await ask(client, sandbox, clock.now().date() + timedelta(days=1))
    assert_error(later, 409, "INVALID_STATE")  # a day to come has nothing to compare yet
    await drain(runtime)
    done = await run_of(client, sandbox, oldest)
    assert done is not None and done["status"] == "DONE"


async def test_one_more_waiting_run_than_the_cap_is_refused_until_one_finishes(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    await drain(runtime)
    sandbox = await mock_sandbox(runtime)
    clock.advance(10 * DAY)
    today = clock.now().date()
    backlog = [today - timedelta(days=n) for n in (1, 2, 3)]  # yesterday too: the daily run's
    for day in backlog:
        assert (await ask(client, sandbox, day)).status_code == 202
    first = await run_of(client, sandbox, backlog[0])
    assert first is not None
    again = await ask(client, sandbox, backlog[0])  # a day waiting already is not one more
    assert again.status_code == 202 and again.json()["id"] == first["id"]
    error = assert_error(await ask(client, sandbox, today), 409, "LIMIT_EXCEEDED")
    assert error["details"] == {"limit": 3, "current": 3}
    assert "at most 3" in error["message"]
    assert await run_of(client, sandbox, today) is None
    await sign_in(client, sandbox)  # the dashboard's button goes through the same rule
    page = await client.get("/dashboard/reconciliation", params={"date": today.isoformat()})
    refused = await client.post(
        "/dashboard/reconciliation", data={"csrf": csrf_of(page), "date": today.isoformat()}
    )
    assert refused.status_code == 409 and "at most 3 are allowed" in refused.text
    assert await ReconcileDays().run_once(runtime) == 1
    assert (await ask(client, sandbox, today)).status_code == 202  # one finished: room for one


async def test_another_applications_run_is_taken_before_a_backlog_is_drained(
    client: httpx.AsyncClient, runtime: Runtime, clock: FrozenClock
) -> None:
    await drain(runtime)
    busy, other = await mock_sandbox(runtime), await mock_sandbox(runtime)
    clock.advance(10 * DAY)
    today = clock.now().date()
    backlog = [today - timedelta(days=n) for n in (1, 2, 3)]
    for day in backlog:  # the busy application asks first, as many days as it may
        assert (await ask(client, busy, day)).status_code == 202
        clock.advance(1)
    assert (await ask(client, other, today)).status_code == 202
    clock.advance(1)
    # Two workers at once: each takes one run, never the same, and one of them is the other's.
    workers = (ReconcileDays().run_once(runtime), ReconcileDays().run_once(runtime))
    assert await asyncio.gather(*workers) == [1, 1]
    ran = await run_of(client, other, today)
    assert ran is not None and ran["status"] == "DONE", ran
    waiting = [await run_of(client, busy, day) for day in backlog]
    assert sorted(r["status"] for r in waiting if r is not None) == ["DONE", "QUEUED", "QUEUED"]
    clock.advance(1)
    await drain(runtime)
    for day in backlog:
        after = await run_of(client, busy, day)
        assert after is not None and after["status"] == "DONE"
