"""PostgreSQL's create of a payment intent runs on the statement lane (payorch.db.statements),
asyncpg's own pool beside the engine's: its creates never touch the engine, it stays within its
size, it survives its connections being dropped, and it closes with the database."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy import event

from payorch.db import Database
from payorch.db.engine import STATEMENT_LANE_SIZE
from payorch.db.statements import APPLICATION_NAME
from payorch.errors import DatabaseUnavailable
from payorch.runtime import Runtime
from tests.backends import terminate_backends
from tests.kit import Sandbox, create_intent


@pytest.fixture(autouse=True)
def _postgresql_only(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the statement lane is PostgreSQL's; SQLite creates in one transaction")


async def lane_backends(database_url: str) -> list[int]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
            APPLICATION_NAME,
        )
    finally:
        await conn.close()
    return [row["pid"] for row in rows]


async def test_concurrent_creates_run_on_the_lane_within_its_size(
    client: httpx.AsyncClient,
    sandbox: Sandbox,
    runtime: Runtime,
    database_url: str,
) -> None:
    through_engine: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        through_engine.append(statement)

    engine = runtime.database.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        created = await asyncio.gather(
            *(create_intent(client, sandbox, key=f"lane-{n}") for n in range(3 * STATEMENT_LANE_SIZE))
        )
        ids = [str(intent["id"]) for intent in created]
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(set(ids)) == 3 * STATEMENT_LANE_SIZE
    assert not [s for s in through_engine if "INSERT" in s.upper()], through_engine
    assert 1 <= len(await lane_backends(database_url)) <= STATEMENT_LANE_SIZE
    listed = await client.get("/v1/payment-intents", params={"limit": 100}, headers=sandbox.headers)
    assert {item["id"] for item in listed.json()["items"]} >= set(ids)


async def test_the_lane_reconnects_after_postgresql_dropped_its_connections(
    client: httpx.AsyncClient, sandbox: Sandbox, database_url: str
) -> None:
    await create_intent(client, sandbox, key="before-drop")
    dropped = await lane_backends(database_url)
    assert dropped
    admin = await asyncpg.connect(database_url)
    try:  # as after a restart or a failover: ended, and the lane's idle sockets seen closed
        await terminate_backends(admin, dropped)
    finally:
        await admin.close()
    intent_id = (await create_intent(client, sandbox, key="after-drop"))["id"]
    response = await client.get(f"/v1/payment-intents/{intent_id}", headers=sandbox.headers)
    assert response.status_code == 200
    assert not set(await lane_backends(database_url)) & set(dropped)


async def test_disposing_of_the_database_closes_the_lane(database_url: str) -> None:
    database = Database(database_url)
    others = set(await lane_backends(database_url))  # the lanes of other tests' databases
    opened: set[int] = set()
    try:
        async with database.one_statement() as conn:
            assert await conn.fetchval("SELECT 1") == 1
            opened = set(await lane_backends(database_url)) - others
    finally:
        await database.dispose()
    assert len(opened) == 1
    for _ in range(600):  # the backend leaves pg_stat_activity just after the socket closes (30 s+)
        if not set(await lane_backends(database_url)) & opened:
            break
        await asyncio.sleep(0.05)
    assert not set(await lane_backends(database_url)) & opened


async def test_a_connection_is_reused_after_an_error_of_postgresql_and_closed_after_a_cancel(
    database_url: str,
) -> None:
    database = Database(database_url)
    try:
        async with database.one_statement() as conn:
            first = await conn.fetchval("SELECT pg_backend_pid()")
        with pytest.raises(asyncpg.DivisionByZeroError):
            async with database.one_statement() as conn:
                assert await conn.fetchval("SELECT pg_backend_pid()") == first
                await conn.fetchval("SELECT 1 / 0")
        async with database.one_statement() as conn:  # PostgreSQL answered: the same connection
            assert await conn.fetchval("SELECT pg_backend_pid()") == first

        with pytest.raises(DatabaseUnavailable):  # out of time: 503 (payorch.db.bounds)
            async with database.one_statement() as conn:
                await asyncio.wait_for(conn.fetchval("SELECT pg_sleep(30)"), 0.2)
        # Cancelled mid-statement: that connection is closed, never handed out again; the next
        # turn opens another at once instead of waiting for the sleep.
        async with database.one_statement() as conn:
            second = await asyncio.wait_for(conn.fetchval("SELECT pg_backend_pid()"), 5)
        assert second != first
        for _ in range(600):  # the backend leaves pg_stat_activity once PostgreSQL sees the close (30 s+)
            if first not in await lane_backends(database_url):
                break
            await asyncio.sleep(0.05)
        assert first not in await lane_backends(database_url)
    finally:
        await database.dispose()
