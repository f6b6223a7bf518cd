"""Provider A's published integration keys (the shared "public" owner): writes are limited per
client address, and what they made is purged after a day. Through HTTP on both databases."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import httpx
import pytest
from sqlalchemy import func, select

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.db.tables.simulator import simulator_a_transactions
from payorch.runtime import Runtime
from payorch.simulator.credentials import PUBLIC_A_API_KEY, PUBLIC_A_COMMERCE_CODE, PUBLIC_OWNER
from payorch.worker.jobs import default_jobs
from tests.conftest import Sandbox
from tests.databases import own_database
from tests.simulator.conftest import A_API, a_headers, create_a, decide_a

database_url = own_database  # the purge job sweeps the database: this module gets its own

PUBLIC = {"Tbk-Api-Key-Id": PUBLIC_A_COMMERCE_CODE, "Tbk-Api-Key-Secret": PUBLIC_A_API_KEY}
GOOD = {"buy_order": "o-1", "session_id": "s", "amount": 1000, "return_url": "https://x.example/r"}
DAY = 86400

Clients = Callable[[str], AbstractAsyncContextManager[httpx.AsyncClient]]


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"simulator_public_rate_limit": "3/minute"}


@pytest.fixture
def from_address(runtime: Runtime) -> Clients:
    """An HTTP client whose requests come from ``address`` (one app: one process's limiter)."""
    app = create_app(runtime=runtime)

    @asynccontextmanager
    async def open_client(address: str) -> AsyncIterator[httpx.AsyncClient]:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http

    return open_client


async def _public_rows(runtime: Runtime) -> int:
    async with runtime.database.transaction() as conn:
        query = select(func.count()).where(simulator_a_transactions.c.owner == PUBLIC_OWNER)
        return int((await conn.execute(query)).scalar_one())


async def test_public_writes_are_limited_per_client_address(
    from_address: Clients, runtime: Runtime, sandbox: Sandbox
) -> None:
    async with from_address("203.0.113.7") as first, from_address("203.0.113.8") as second:
        token = await create_a(first, PUBLIC)
        await decide_a(first, token, "approve")
        committed = await first.put(f"{A_API}/{token}", headers=PUBLIC)  # commit is a write too
        assert committed.status_code == 200, committed.text
        assert (await first.post(A_API, json=GOOD, headers=PUBLIC)).status_code == 200

        before = await _public_rows(runtime)
        refused = await first.post(A_API, json=GOOD, headers=PUBLIC)
        assert refused.status_code == 429
        assert refused.json() == {"error_message": "Too Many Requests"}  # the provider's style
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert await _public_rows(runtime) == before  # nothing was created
        refund = await first.post(f"{A_API}/{token}/refunds", json={"amount": 1}, headers=PUBLIC)
        assert refund.status_code == 429

        # Reads are not limited, nor are an application's own MOCK keys from that address.
        assert (await first.get(f"{A_API}/{token}", headers=PUBLIC)).status_code == 200
        mock = a_headers(runtime, sandbox.application_id)
        assert (await first.post(A_API, json=GOOD, headers=mock)).status_code == 200
        # Another address has its own budget.
        assert (await second.post(A_API, json=GOOD, headers=PUBLIC)).status_code == 200


async def test_public_rows_are_purged_after_a_day_and_mock_rows_never(
    from_address: Clients, runtime: Runtime, clock: FrozenClock, sandbox: Sandbox
) -> None:
    mock = a_headers(runtime, sandbox.application_id)
    async with from_address("198.51.100.1") as http:
        old_public = await create_a(http, PUBLIC)
        old_mock = await create_a(http, mock)
        clock.advance(3600)
        newer_public = await create_a(http, PUBLIC)
        clock.advance(DAY - 3600 + 1)  # old ones: a day and a second; the newer one: 23 h

        job = next(job for job in default_jobs() if job.name == "simulator-public-purge")
        while await job.run_once(runtime):
            pass

        assert (await http.get(f"{A_API}/{old_public}", headers=PUBLIC)).status_code == 404
        assert (await http.get(f"{A_API}/{newer_public}", headers=PUBLIC)).status_code == 200
        assert (await http.get(f"{A_API}/{old_mock}", headers=mock)).status_code == 200
