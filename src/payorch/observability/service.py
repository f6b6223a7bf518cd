"""Liveness and readiness: is the process up; can it serve (database reachable, schema current)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from functools import lru_cache

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from payorch.db import Phases, migrate
from payorch.errors import ApiError

log = logging.getLogger("payorch.observability")
READINESS_TIMEOUT_SECONDS = 2.0


class NotReady(ApiError):
    """503 from /readyz. Local to this endpoint: no API operation answers it."""

    status, code = 503, "NOT_READY"
    default_message = "The service is not ready to serve requests."


@dataclass(frozen=True)
class Readiness:
    database: str  # ok | unreachable
    migrations: str  # current | behind | unknown

    @property
    def ready(self) -> bool:
        return self.database == "ok" and self.migrations == "current"

    def as_dict(self) -> dict[str, str]:
        return {"database": self.database, "migrations": self.migrations}


@lru_cache(maxsize=1)
def _heads() -> frozenset[str]:
    # Reading the migration scripts costs milliseconds: once per process is enough.
    return frozenset(migrate.head_revisions())


async def check_readiness(phases: Phases) -> Readiness:
    """One short query: the version table answers (database reachable) and holds the heads.

    Reads ``alembic_version`` itself rather than through Alembic's MigrationContext, which
    logs two INFO lines per call: a probe every few seconds would flood the logs.
    """
    try:
        async with asyncio.timeout(READINESS_TIMEOUT_SECONDS):
            async with phases.reading() as conn:
                await conn.execute(text("SELECT 1"))
                try:
                    rows = await conn.execute(text("SELECT version_num FROM alembic_version"))
                    current = frozenset(str(row[0]) for row in rows)
                except DBAPIError:
                    current = frozenset()  # no version table: never migrated
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; the kind is logged
        log.warning("readiness: database unreachable: %s", type(exc).__name__)
        return Readiness("unreachable", "unknown")
    return Readiness("ok", "current" if current == _heads() else "behind")
