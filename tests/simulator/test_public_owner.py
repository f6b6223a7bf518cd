"""The published test credentials (the shared "public" owner): provider A's integration keys and
provider B's public test token. Writes are limited per client address, and what they made is
purged after a day. Through HTTP on both databases."""

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
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.provider_a.credentials import PUBLIC_A_API_KEY, PUBLIC_A_COMMERCE_CODE
from payorch.simulator.provider_b.credentials import PUBLIC_B_ACCESS_TOKEN
from payorch.worker.jobs import default_jobs
from tests.databases import own_database
from tests.kit import Sandbox
from tests.simulator import helpers as simulated
from tests.simulator.helpers import A_API, a_headers, create_a, decide_a

database_url = own_database  # the purge job sweeps the database: this module gets its own

PUBLIC = {"Tbk-Api-Key-Id": PUBLIC_A_COMMERCE_CODE, "Tbk-Api-Key-Secret": PUBLIC_A_API_KEY}
PUBLIC_B = {"Authorization": f"Bearer {PUBLIC_B_ACCESS_TOKEN}"}
GOOD = {"buy_order": "o-1", "session_id": "s", "amount": 1000, "return_url": "https://x.example/r"}
DAY = 86400

Clients = Callable[[str], AbstractAsyncContextManager[httpx.AsyncClient]]


pytestmark = pytest.mark.settings(simulator_public_rate_limit="3/minute")


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


@pytest.mark.slow  # a second or more here: make test-fast leaves it out
async def test_public_b_token_writes_are_limited_and_its_rows_purged(
    from_address: Clients, runtime: Runtime, clock: FrozenClock, sandbox: Sandbox
) -> None:
    mock = simulated.b_headers(runtime, sandbox.application_id)
    async with from_address("192.0.2.9") as http:
        preference = await simulated.create_b(http, PUBLIC_B, reference="payi_public")
        paid = await simulated.pay_b(http, preference["id"], "approve")
        payment_id = simulated.query_of(paid)["payment_id"]
        refund = await http.post(
            f"{simulated.B}/v1/payments/{payment_id}/refunds", headers={**PUBLIC_B, "X-Idempotency-Key": "k1"}
        )
        assert refund.status_code == 201, refund.text
        await simulated.create_b(http, PUBLIC_B, reference="payi_public2")  # the third write
        refused = await http.post(f"{simulated.B}/checkout/preferences", json={"items": []}, headers=PUBLIC_B)
        assert refused.status_code == 429 and 1 <= int(refused.headers["Retry-After"]) <= 60
        assert refused.json()["status"] == 429 and refused.json()["message"] == "Too Many Requests"
        # Reads are not limited; an application's own token is not limited and sees none of it.
        assert (
            await http.get(f"{simulated.B}/v1/payments/{payment_id}", headers=PUBLIC_B)
        ).status_code == 200
        assert (await http.get(f"{simulated.B}/v1/payments/{payment_id}", headers=mock)).status_code == 404
        own = await simulated.create_b(http, mock, reference="payi_own")

        clock.advance(DAY + 1)
        job = next(job for job in default_jobs() if job.name == "simulator-public-purge")
        while await job.run_once(runtime):
            pass
        assert (
            await http.get(f"{simulated.B}/v1/payments/{payment_id}", headers=PUBLIC_B)
        ).status_code == 404
        gone = await http.get(f"{simulated.B}/checkout/preferences/{preference['id']}", headers=PUBLIC_B)
        assert gone.status_code == 404
        kept = await http.get(f"{simulated.B}/checkout/preferences/{own['id']}", headers=mock)
        assert kept.status_code == 200
