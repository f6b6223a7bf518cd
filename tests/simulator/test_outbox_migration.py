"""Migration 0031 copies provider B's notifications and provider C's events into the simulator's
one outbox (and back on downgrade), on SQLite and PostgreSQL: what was pending is still sent."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from payorch.db import Database
from payorch.db.migrate import alembic_config
from payorch.db.types import JsonType, UtcDateTime
from tests.databases import create_postgres_database, drop_postgres_database

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _migrate(url: str, revision: str, down: bool = False) -> None:
    step = command.downgrade if down else command.upgrade
    thread = threading.Thread(target=step, args=(alembic_config(url), revision))
    thread.start()
    thread.join()


def _delivery(name: str, subject: sa.ColumnClause[object]) -> sa.TableClause:
    return sa.table(
        name,
        sa.column("id", sa.String),
        sa.column("owner", sa.String),
        subject,
        sa.column("url", sa.Text),
        sa.column("body", JsonType),
        sa.column("status", sa.String),
        sa.column("attempts", sa.Integer),
        sa.column("next_attempt_at", UtcDateTime),
        sa.column("last_error", sa.String),
        sa.column("created_at", UtcDateTime),
    )


B_ROWS = _delivery("simulator_b_notifications", sa.column("payment_id", sa.BigInteger))
C_ROWS = _delivery("simulator_c_events", sa.column("session_id", sa.String))
OUTBOX = sa.table(
    "simulator_notifications",
    sa.column("id", sa.String),
    sa.column("provider", sa.String),
    sa.column("subject", sa.String),
    sa.column("body", JsonType),
    sa.column("status", sa.String),
    sa.column("attempts", sa.Integer),
)


def _row(row_id: str, status: str, **subject: object) -> dict[str, object]:
    return {
        "id": row_id,
        "owner": "app_old",
        **subject,
        "url": "http://testserver/v1/provider-notifications/x/cfg_1",
        "body": {"id": row_id, "type": "payment"},
        "status": status,
        "attempts": 1,
        "next_attempt_at": AT,
        "last_error": "HTTP 503" if status == "PENDING" else None,
        "created_at": AT,
    }


@pytest.fixture
async def database_at_0030(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    admin = None
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
    else:
        url, admin = await create_postgres_database()
    _migrate(url, "0030")
    try:
        yield url
    finally:
        if admin is not None:
            await drop_postgres_database(url, admin)


async def _outbox(url: str) -> list[tuple[object, ...]]:
    database = Database(url)
    try:
        async with database.transaction() as conn:
            query = sa.select(OUTBOX).order_by(OUTBOX.c.id)
            return [tuple(row) for row in await conn.execute(query)]
    finally:
        await database.dispose()


async def test_b_and_c_rows_move_into_the_outbox_and_back(database_at_0030: str) -> None:
    database = Database(database_at_0030)
    try:
        async with database.transaction() as conn:
            await conn.execute(sa.insert(B_ROWS), [_row("smn_1", "PENDING", payment_id=1234567)])
            await conn.execute(
                sa.insert(C_ROWS),
                [_row("evt_1", "PENDING", session_id="cs_1"), _row("evt_2", "DELIVERED", session_id="cs_1")],
            )
    finally:
        await database.dispose()

    _migrate(database_at_0030, "0031")
    assert await _outbox(database_at_0030) == [
        ("evt_1", "provider_c", "cs_1", {"id": "evt_1", "type": "payment"}, "PENDING", 1),
        ("evt_2", "provider_c", "cs_1", {"id": "evt_2", "type": "payment"}, "DELIVERED", 1),
        ("smn_1", "provider_b", "1234567", {"id": "smn_1", "type": "payment"}, "PENDING", 1),
    ]

    _migrate(database_at_0030, "0030", down=True)
    database = Database(database_at_0030)
    try:
        async with database.transaction() as conn:
            b = (await conn.execute(sa.select(B_ROWS.c.id, B_ROWS.c.payment_id))).all()
            c = (await conn.execute(sa.select(C_ROWS.c.id, C_ROWS.c.session_id).order_by(C_ROWS.c.id))).all()
    finally:
        await database.dispose()
    assert [tuple(row) for row in b] == [("smn_1", 1234567)]
    assert [tuple(row) for row in c] == [("evt_1", "cs_1"), ("evt_2", "cs_1")]
