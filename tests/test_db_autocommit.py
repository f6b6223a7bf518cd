"""A connection that served an autocommit step (``reading()``, ``each_statement()``: no
BEGIN/COMMIT on PostgreSQL) goes back to the pool transactional: the next ``transaction()`` on
it still rolls back. One pooled connection, so the transaction gets the very same connection."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db import Database

Step = Callable[[Database], AbstractAsyncContextManager[AsyncConnection]]


class Rollback(Exception):
    pass


@pytest.fixture
async def one_connection(database_url: str) -> AsyncIterator[tuple[Database, str]]:
    db = Database(database_url, pool_size=1)  # PostgreSQL: one connection, reused by every step
    table = f"autocommit_probe_{secrets.token_hex(4)}"  # this test's own table
    async with db.transaction() as conn:
        await conn.execute(text(f"CREATE TABLE {table} (n INTEGER)"))
    try:
        yield db, table
    finally:
        async with db.transaction() as conn:
            await conn.execute(text(f"DROP TABLE {table}"))
        await db.dispose()


@pytest.mark.parametrize("step", [Database.reading, Database.each_statement])
async def test_a_transaction_after_an_autocommit_step_on_the_same_connection_still_rolls_back(
    one_connection: tuple[Database, str], step: Step
) -> None:
    db, table = one_connection
    async with step(db) as conn:
        assert (await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one() == 0
    with pytest.raises(Rollback):
        async with db.transaction() as conn:
            await conn.execute(text(f"INSERT INTO {table} (n) VALUES (1)"))
            raise Rollback
    async with db.transaction() as conn:
        assert (await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one() == 0
