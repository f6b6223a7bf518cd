"""simulator/repository.py on a simulated provider's own table (SQLite and PostgreSQL):
``records``, every row a query selects as the provider's record type, in the query's order; and
``public_purge``, the public owner's rows made before a time deleted, nobody else's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from payorch.runtime import Runtime
from payorch.simulator import repository as shared
from payorch.simulator.credentials import PUBLIC_OWNER
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.tables import simulator_d_sessions as table

AT = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def _session(number: int, owner: str) -> SimDSession:
    made = AT + timedelta(minutes=number)
    return SimDSession(
        f"CS{number:016X}", owner, "pi_records", 1000, "EUR", False, None, {"reference": "r"}, made, made
    )


async def test_records_are_the_selected_rows_as_records_in_the_querys_order(runtime: Runtime) -> None:
    rows = [_session(1, "app_records"), _session(2, "app_records"), _session(3, "app_other")]
    async with runtime.database.transaction() as conn:
        for row in rows:
            await shared.insert_record(conn, table, row)
        query = select(table).where(table.c.owner == "app_records").order_by(table.c.created_at.desc())
        found = await shared.records(conn, SimDSession, query)
        none = await shared.records(conn, SimDSession, select(table).where(table.c.owner == "app_none"))
    assert found == [rows[1], rows[0]]
    assert none == []


async def test_the_public_purge_deletes_only_the_public_owners_rows_made_before(runtime: Runtime) -> None:
    rows = [_session(11, PUBLIC_OWNER), _session(12, PUBLIC_OWNER), _session(13, "app_purge")]
    purge = shared.public_purge(table)
    async with runtime.database.transaction() as conn:
        for row in rows:
            await shared.insert_record(conn, table, row)
        assert await purge(conn, AT + timedelta(minutes=12), 100) == 1  # the 11th only
        left = await shared.records(conn, SimDSession, select(table).where(table.c.id.in_([r.id for r in rows])))
    assert sorted(r.id for r in left) == sorted([rows[1].id, rows[2].id])
