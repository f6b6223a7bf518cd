"""A PostgreSQL write of several tables in one statement: one round trip, atomic by itself.

The hottest write (creating a payment intent) chains each domain's INSERT as a data-modifying
CTE: a statement commits or fails as a whole, so it needs no BEGIN/COMMIT of its own, and the
whole write costs one round trip instead of one per statement. Each domain writes its own table
in its own fragment (its repository's SQL); the caller only orders the fragments, and later ones
see earlier ones' RETURNING rows (the only way CTEs pass anything to each other).

Compiled once per process by SQLAlchemy (``text`` with named parameters into asyncpg's ``$n``),
then run as driver SQL (``exec_driver_sql``: no per-request compile; the engine's events still
see it). Parameters go to the driver as they are, so fragments cast each one
(``CAST(:x AS BIGINT)``) and JSON goes as text cast to JSONB.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import RowMapping, text
from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True, slots=True)
class Fragment:
    """One CTE of the chain: ``name AS (sql)``; ``sql`` may read earlier fragments by name."""

    name: str
    sql: str


class OneStatement:
    """Chained fragments, compiled on first use with the connection's dialect (asyncpg's ``$n``)."""

    def __init__(self, fragments: list[Fragment], final: str) -> None:
        """``WITH`` the fragments, in order, then the ``final`` SELECT (the answer's one row)."""
        ctes = ",\n".join(f"{fragment.name} AS (\n{fragment.sql}\n)" for fragment in fragments)
        self._clause = text(f"WITH {ctes}\n{final}")
        self._compiled: tuple[str, tuple[str, ...]] | None = None

    async def run(self, conn: AsyncConnection, parameters: Mapping[str, object]) -> RowMapping:
        """Run on ``conn``, which must hold no transaction (AUTOCOMMIT: Phases.one_statement)."""
        if self._compiled is None:
            compiled = self._clause.compile(dialect=conn.dialect)
            self._compiled = (str(compiled), tuple(compiled.positiontup or ()))
        sql, names = self._compiled
        result = await conn.exec_driver_sql(sql, tuple(parameters[name] for name in names))
        return result.mappings().one()
