"""The Alembic migrations build exactly the tables payorch.db.tables describes, on SQLite and
PostgreSQL: a column, index or constraint added to one and not the other is a failure here."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection

from payorch.db import Database
from payorch.db.tables import metadata


def _differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(
        connection, opts={"compare_type": True, "compare_server_default": True}
    )
    return list(compare_metadata(context, metadata))


async def test_the_migrated_database_matches_the_table_definitions(database: Database) -> None:
    async with database.engine.connect() as conn:
        differences = await conn.run_sync(_differences)
    assert differences == []
