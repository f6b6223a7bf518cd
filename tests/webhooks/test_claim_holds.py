"""A claim reads each endpoint's hold again once it has locked the endpoint's row: a hold that
another worker recorded after this claim listed the due endpoints (a failed probe's breaker, a
backoff, a disable) stops the claim, so a second probe never follows a failed one at once.

The race is made certain here: between the claim's list of due endpoints and its lock, another
transaction commits what the other worker's result would (the lease released, the hold set).
PostgreSQL only: SQLite's BEGIN IMMEDIATE runs one claim or result at a time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.webhooks import webhook_endpoints
from payorch.runtime import Runtime
from payorch.webhooks import queue
from tests.webhooks.helpers import Hooks, probed_endpoint

FAILING = "/status/500"
LockEndpoints = Callable[..., Awaitable[queue.LockedEndpoints]]


@pytest.fixture(autouse=True)
def _postgresql_only(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the claim's lock and another worker's commit: PostgreSQL only")


def committed_before_the_lock(
    monkeypatch: pytest.MonkeyPatch, runtime: Runtime, endpoint_id: str, **hold: object
) -> list[int]:
    """Wraps queue.lock_endpoints: another transaction sets ``hold`` on the endpoint and commits
    just before the claim locks it; returns the list of calls made (one per claim)."""
    real: LockEndpoints = queue.lock_endpoints
    calls: list[int] = []

    async def lock_endpoints(
        conn: AsyncConnection, endpoint_ids: Sequence[str], *, now: datetime, token_prefix: str
    ) -> queue.LockedEndpoints:
        calls.append(len(endpoint_ids))
        async with runtime.database.transaction() as other:  # the other worker's result
            await conn_update(other, endpoint_id, hold)
        return await real(conn, endpoint_ids, now=now, token_prefix=token_prefix)

    monkeypatch.setattr(queue, "lock_endpoints", lock_endpoints)
    return calls


async def conn_update(conn: AsyncConnection, endpoint_id: str, values: dict[str, object]) -> None:
    await conn.execute(
        update(webhook_endpoints).where(webhook_endpoints.c.id == endpoint_id).values(**values)
    )


# What another worker commits between this claim's list of due endpoints and its lock, and how
# many attempts the claim may then start: none while a hold is set; the probe when nothing is
# held (only the streak was counted again).
RACES: dict[str, tuple[dict[str, object], int]] = {
    "breaker": ({"breaker_until": timedelta(seconds=30)}, 0),
    "backoff": ({"backoff_until": timedelta(seconds=30)}, 0),
    "disabled": ({"enabled": False}, 0),
    "nothing held": ({"failed_attempts": 101}, 1),
}


@pytest.mark.postgres
@pytest.mark.parametrize("race", sorted(RACES))
async def test_what_another_worker_committed_before_the_claims_lock_holds(
    monkeypatch: pytest.MonkeyPatch, race: str, hooks: Hooks
) -> None:
    client, sandbox, runtime, _, receiver, deliveries = hooks.parts()
    committed, attempts = RACES[race]
    now = runtime.clock.now()
    values = {k: now + v if isinstance(v, timedelta) else v for k, v in committed.items()}
    endpoint_id = await probed_endpoint(client, sandbox, runtime, receiver.url(FAILING))
    calls = committed_before_the_lock(monkeypatch, runtime, endpoint_id, **values)
    assert await deliveries.run_once(runtime) == attempts
    await deliveries.settle()
    assert calls == [1]  # the endpoint was listed as due: the race happened
    assert len(receiver.at(FAILING)) == attempts
