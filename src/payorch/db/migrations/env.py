"""Alembic environment: runs migrations through the async engine on SQLite or PostgreSQL."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from payorch.db.engine import Database
from payorch.db.tables import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        on_version_apply=config.attributes.get("on_version_apply"),  # db/migrate.py's report
    )
    known = {script.revision for script in context.script.walk_revisions()}
    newer = sorted(set(context.get_context().get_current_heads()) - known)
    if newer:
        # Migrated by a newer release (this is an old process restarting during a rolling
        # upgrade, docs/deployment.md "Upgrading"): its schema keeps ours working; leave it.
        config.attributes["newer_revisions"] = newer  # read by db/migrate.py
        return
    with context.begin_transaction():
        context.run_migrations()


async def _main() -> None:
    database = Database(
        config.get_main_option("sqlalchemy.url") or "",
        transaction_pooling=bool(config.attributes.get("transaction_pooling")),  # db/migrate.py
    )
    try:
        async with database.engine.connect() as conn:
            await conn.run_sync(_run)
            await conn.commit()
    finally:
        await database.dispose()


asyncio.run(_main())
