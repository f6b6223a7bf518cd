"""A PostgreSQL write of several tables in one statement: one round trip, atomic by itself.

The hottest write (creating a payment intent) chains each domain's INSERT as a data-modifying
CTE: a statement commits or fails as a whole, so it needs no BEGIN/COMMIT of its own, and the
whole write costs one round trip instead of one per statement. Each domain writes its own table
in its own fragment (its repository's SQL); the caller only orders the fragments, and later ones
see earlier ones' RETURNING rows (the only way CTEs pass anything to each other).

Compiled once per process by SQLAlchemy (``text`` with named parameters into asyncpg's ``$n``),
then run on a connection of payorch.db.statements (asyncpg itself: it prepares the statement once
per connection). Parameters go to the driver as they are, so fragments cast each one
(``CAST(:x AS BIGINT)``) and JSON goes as text cast to JSONB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import asyncpg
from sqlalchemy import text

from payorch.db.statements import ASYNCPG_DIALECT, StatementConnection
from payorch.observability import timing


@dataclass(frozen=True, slots=True)
class Fragment:
    """One CTE of the chain: ``name AS (sql)``; ``sql`` may read earlier fragments by name."""

    name: str
    sql: str


class OneStatement:
    """Chained fragments, compiled once into asyncpg's ``$n`` form."""

    def __init__(self, fragments: list[Fragment], final: str) -> None:
        """``WITH`` the fragments, in order, then the ``final`` SELECT (the answer's one row)."""
        ctes = ",\n".join(f"{fragment.name} AS (\n{fragment.sql}\n)" for fragment in fragments)
        compiled = text(f"WITH {ctes}\n{final}").compile(dialect=ASYNCPG_DIALECT)
        self.sql = str(compiled)
        self._names = tuple(compiled.positiontup or ())

    async def run(self, conn: StatementConnection, parameters: Mapping[str, object]) -> asyncpg.Record:
        """Run on ``conn`` (Phases.one_statement: no transaction; the statement is its own)."""
        with timing.database():  # Server-Timing's db (observability/timing.py)
            row = await conn.fetchrow(self.sql, *(parameters[name] for name in self._names))
        assert row is not None, "the final SELECT answers one row"
        return row
