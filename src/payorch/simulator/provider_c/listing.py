"""Simulated provider C's lists by creation time, as its API takes them: ``created[gte]`` and
``created[lt]`` (unix seconds), newest first, ``limit`` (at most 100) and ``starting_after``.
Reconciliation reads a day of sessions, PaymentIntents and refunds through them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import ColumnElement, Table, select
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.simulator.provider_c.wire import SimCWireError, integer

LARGEST_PAGE = 100


@dataclass(frozen=True, slots=True)
class Created:
    """``created[gte]`` / ``created[lt]`` of a list request (either may be absent)."""

    since: datetime | None
    before: datetime | None

    def conditions(self, table: Table) -> list[ColumnElement[bool]]:
        found = []
        if self.since is not None:
            found.append(table.c.created_at >= self.since)
        if self.before is not None:
            found.append(table.c.created_at < self.before)
        return found

    @property
    def given(self) -> bool:
        return self.since is not None or self.before is not None


def created_of(query: Mapping[str, str]) -> Created:
    def moment(name: str) -> datetime | None:
        value = query.get(name)
        return None if value is None else datetime.fromtimestamp(integer(value, name), UTC)

    return Created(moment("created[gte]"), moment("created[lt]"))


def limit_of(query: Mapping[str, str]) -> int:
    limit = integer(query.get("limit", "10"), "limit", minimum=1)
    if limit > LARGEST_PAGE:
        raise SimCWireError(400, f"Invalid integer: limit (at most {LARGEST_PAGE})", param="limit")
    return limit


async def page_of(
    conn: AsyncConnection,
    table: Table,
    owner: str,
    created: Created,
    limit: int,
    starting_after: str | None,
) -> list[RowMapping]:
    """``limit`` rows of ``owner``'s in ``table`` (newest first) after the object
    ``starting_after`` (an id of the same list; 400 when the owner has none such)."""
    query = select(table).where(table.c.owner == owner, *created.conditions(table))
    if starting_after is not None:
        after = (
            await conn.execute(
                select(table.c.created_at).where(table.c.id == starting_after, table.c.owner == owner)
            )
        ).first()
        if after is None:
            raise SimCWireError(400, f"No such object: '{starting_after}'", param="starting_after")
        query = query.where(
            (table.c.created_at < after.created_at)
            | ((table.c.created_at == after.created_at) & (table.c.id < starting_after))
        )
    query = query.order_by(table.c.created_at.desc(), table.c.id.desc()).limit(limit)
    return list((await conn.execute(query)).mappings())
