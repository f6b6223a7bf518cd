"""PostgreSQL lost under a request: 503 SERVICE_UNAVAILABLE with Retry-After in the error shape,
nothing half-written; a read retried once transparently; a pooled connection PostgreSQL closed
while idle never reaches a request (payorch.db.unavailable).

The module's own database: its backends are terminated with pg_terminate_backend(), as a restart
of PostgreSQL does to every connection; a table lock holds a statement in flight meanwhile.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import httpx
import pytest

from payorch.app import create_app
from payorch.clock import FrozenClock
from payorch.composition import build_runtime
from payorch.db import Database
from payorch.runtime import Runtime
from tests.backends import terminate_backends
from tests.databases import own_database
from tests.kit import Sandbox, assert_error, create_endpoint, create_intent, intent_body, make_settings

database_url = own_database  # its backends are terminated: this module gets its own

RETRY_AFTER = "1"


@pytest.fixture(autouse=True)
def _postgresql_only(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("connections to lose are PostgreSQL's; SQLite's file has none")


async def blocked_backends(admin: asyncpg.Connection[asyncpg.Record]) -> list[int]:
    rows = await admin.fetch(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
    )
    return [row["pid"] for row in rows]


async def wait_for_blocked(admin: asyncpg.Connection[asyncpg.Record], besides: int = 0) -> int:
    """The pid of the (one) backend waiting on the lock, other than ``besides``; up to 30 s and more
    (each round is a query and 10 ms), as long as a loaded machine may take to send the statement."""
    for _ in range(3000):
        pids = [pid for pid in await blocked_backends(admin) if pid != besides]
        if pids:
            assert len(pids) == 1, pids
            return pids[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no statement came to wait on the lock")


async def terminate_all(admin: asyncpg.Connection[asyncpg.Record]) -> int:
    pids = [
        row["pid"]
        for row in await admin.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    ]
    await terminate_backends(admin, pids)
    return len(pids)


@asynccontextmanager
async def locked(database_url: str, table: str) -> AsyncIterator[None]:
    """``table`` locked against every statement, by a connection of its own (a transaction
    would freeze what the admin connection reads of pg_stat_activity)."""
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():
            await conn.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            yield
    finally:
        await conn.close()


@pytest.fixture
async def admin(database_url: str) -> AsyncIterator[asyncpg.Connection[asyncpg.Record]]:
    conn = await asyncpg.connect(database_url)
    yield conn
    await conn.close()


def assert_unavailable(answer: httpx.Response) -> None:
    error = assert_error(answer, 503, "SERVICE_UNAVAILABLE")
    assert answer.headers["retry-after"] == RETRY_AFTER
    assert error["details"] == {"retry_after_seconds": int(RETRY_AFTER)}


async def post_intent(
    client: httpx.AsyncClient, sandbox: Sandbox, body: dict[str, object], key: str
) -> httpx.Response:
    return await client.post(
        "/v1/payment-intents", json=body, headers={**sandbox.headers, "Idempotency-Key": key}
    )


async def intents_of(client: httpx.AsyncClient, sandbox: Sandbox, reference: str) -> list[str]:
    listed = await client.get("/v1/payment-intents", params={"limit": 100}, headers=sandbox.headers)
    assert listed.status_code == 200, listed.text
    return [item["id"] for item in listed.json()["items"] if item["external_reference"] == reference]


async def test_connections_postgresql_closed_while_idle_never_reach_a_request(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    admin: asyncpg.Connection[asyncpg.Record],
) -> None:
    intent_id = (await create_intent(client, sandbox, key="idle-1"))["id"]
    assert (await client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers)).status_code == 200
    assert await terminate_all(admin) >= 2  # the engine's pooled connection and the lane's
    read = await client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers)
    assert read.status_code == 200, read.text
    assert await terminate_all(admin) >= 1
    await create_intent(client, sandbox, key="idle-2", external_reference="idle-2")
    assert await terminate_all(admin) >= 1
    await create_endpoint(client, sandbox, "http://127.0.0.1:8080/hook")  # the request's own transaction


async def test_a_read_whose_connection_is_lost_mid_statement_is_retried_once(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    admin: asyncpg.Connection[asyncpg.Record],
    database_url: str,
) -> None:
    intent_id = (await create_intent(client, sandbox, key="mid-read"))["id"]
    async with locked(database_url, "payment_intents"):
        read = asyncio.create_task(client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers))
        first = await wait_for_blocked(admin)
        await terminate_backends(admin, [first])
        second = await wait_for_blocked(admin, besides=first)  # the retry, on a new connection
    answer = await read
    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == intent_id
    assert second != first


async def test_a_write_whose_connection_is_lost_is_503_writes_nothing_and_is_not_retried(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    admin: asyncpg.Connection[asyncpg.Record],
    database_url: str,
) -> None:
    await create_intent(client, sandbox, key="warm", external_reference="warm")
    body = intent_body(sandbox, external_reference="lost-write")
    async with locked(database_url, "payment_intents"):
        write = asyncio.create_task(post_intent(client, sandbox, body, "lost-write"))
        await terminate_backends(admin, [await wait_for_blocked(admin)])
        answer = await write
        await asyncio.sleep(0.2)
        assert await blocked_backends(admin) == []  # no second try waits on the lock
    assert_unavailable(answer)
    assert await intents_of(client, sandbox, "lost-write") == []
    retried = await post_intent(client, sandbox, body, "lost-write")  # the client's retry, same key
    assert retried.status_code == 201, retried.text
    assert await intents_of(client, sandbox, "lost-write") == [retried.json()["id"]]


async def test_a_write_in_the_request_transaction_whose_connection_is_lost_is_503_and_writes_nothing(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    admin: asyncpg.Connection[asyncpg.Record],
    database_url: str,
) -> None:
    url = "http://127.0.0.1:8080/lost"
    async with locked(database_url, "webhook_endpoints"):
        write = asyncio.create_task(
            client.post("/v1/admin/webhook-endpoints", json={"url": url}, headers=sandbox.headers)
        )
        await terminate_backends(admin, [await wait_for_blocked(admin)])
        answer = await write
    assert_unavailable(answer)
    listed = await client.get("/v1/admin/webhook-endpoints", headers=sandbox.headers)
    assert listed.status_code == 200, listed.text
    assert [item for item in listed.json()["items"] if item["url"] == url] == []


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def unreachable(clock: FrozenClock) -> AsyncIterator[httpx.AsyncClient]:
    url = f"postgresql://postgres@127.0.0.1:{closed_port()}/nowhere"
    database = Database(url)
    runtime: Runtime = build_runtime(make_settings(url), clock=clock, database=database)
    transport = httpx.ASGITransport(app=create_app(runtime=runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http
    await runtime.close()
    await database.dispose()


async def test_an_unreachable_database_is_503_with_retry_after(unreachable: httpx.AsyncClient) -> None:
    key = {"Authorization": "Bearer pay_sb_000000000000_" + "0" * 48}
    assert_unavailable(await unreachable.get("/v1/payment-intents", headers=key))
    assert_unavailable(
        await unreachable.post("/v1/admin/webhook-endpoints", json={"url": "http://a.example"}, headers=key)
    )


async def test_a_dashboard_page_without_its_database_is_503_with_retry_after(
    unreachable: httpx.AsyncClient,
) -> None:
    page = await unreachable.get("/dashboard/overview", cookies={"payorch_session": "s" * 43})
    assert page.status_code == 503 and page.headers["retry-after"] == RETRY_AFTER
    assert "text/html" in page.headers["content-type"] and "Not done" in page.text
