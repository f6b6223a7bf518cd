"""SQL of the reconciliation domain: its own two tables, and payorch's books of a day (a read
across the checkouts, intents and payments tables; their domains write them)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.records import column_values, record_of
from payorch.db.tables import payment_intents
from payorch.db.tables.foundation import applications
from payorch.db.tables.providers import checkouts, connectors, payments
from payorch.db.tables.reconciliation import reconciliation_findings as findings
from payorch.db.tables.reconciliation import reconciliation_runs as runs
from payorch.jsontypes import JsonObject
from payorch.reconciliation.records import (
    BookEntry,
    Finding,
    FindingAction,
    FindingKind,
    FindingStatus,
    Run,
    RunStatus,
)

CHUNK = 500  # ids per IN (...) list

_BOOKS = select(
    checkouts.c.reference,
    checkouts.c.created_at,
    checkouts.c.payment_intent_id,
    payment_intents.c.status,
    payment_intents.c.amount,
    payment_intents.c.currency,
    payments.c.provider_reference,
    payments.c.amount.label("payment_amount"),
    payments.c.currency.label("payment_currency"),
    payments.c.refunded_amount,
    payments.c.dispute_status,
    payment_intents.c.capture_method,
    payments.c.amount_captured,
    payments.c.status.label("payment_status"),
).select_from(
    checkouts.join(payment_intents, payment_intents.c.id == checkouts.c.payment_intent_id).outerjoin(
        payments, payments.c.payment_intent_id == checkouts.c.payment_intent_id
    )
)


def _entry(m: RowMapping) -> BookEntry:
    return BookEntry(
        checkout_reference=str(m["reference"]),
        checkout_created_at=m["created_at"],
        payment_intent_id=str(m["payment_intent_id"]),
        intent_status=str(m["status"]),
        intent_amount=int(m["amount"]),
        intent_currency=str(m["currency"]),
        payment_reference=m["provider_reference"],
        payment_amount=m["payment_amount"],
        payment_currency=m["payment_currency"],
        refunded=int(m["refunded_amount"] or 0),
        dispute_status=m["dispute_status"],
        capture_method=str(m["capture_method"]),
        captured=m["amount_captured"],
        payment_status=m["payment_status"],
    )


async def day_books(
    conn: AsyncConnection, connector_id: str, start: datetime, end: datetime
) -> list[BookEntry]:
    """The connector's checkouts made in [start, end), with their intents and payments."""
    query = _BOOKS.where(
        checkouts.c.connector_id == connector_id,
        checkouts.c.created_at >= start,
        checkouts.c.created_at < end,
    )
    return [_entry(row) for row in (await conn.execute(query)).mappings()]


async def books_of_intents(
    conn: AsyncConnection, application_id: str, provider: str, intent_ids: Sequence[str]
) -> list[BookEntry]:
    """The application's checkouts at ``provider`` for the intents named (any day)."""
    found: list[BookEntry] = []
    for at in range(0, len(intent_ids), CHUNK):
        query = _BOOKS.where(
            checkouts.c.application_id == application_id,
            checkouts.c.provider == provider,
            checkouts.c.payment_intent_id.in_(intent_ids[at : at + CHUNK]),
        )
        found += [_entry(row) for row in (await conn.execute(query)).mappings()]
    return found


async def enabled_connectors(conn: AsyncConnection, application_id: str) -> list[tuple[str, str]]:
    """(connector id, provider) of the application's enabled connectors."""
    query = (
        select(connectors.c.id, connectors.c.provider)
        .where(connectors.c.application_id == application_id, connectors.c.enabled.is_(True))
        .order_by(connectors.c.provider, connectors.c.id)
    )
    return [(str(row.id), str(row.provider)) for row in await conn.execute(query)]


async def applications_with_connectors(conn: AsyncConnection, created_before: datetime) -> list[str]:
    """Applications made before ``created_before`` with an enabled connector."""
    query = (
        select(connectors.c.application_id)
        .join(applications, applications.c.id == connectors.c.application_id)
        .where(connectors.c.enabled.is_(True), applications.c.created_at < created_before)
        .distinct()
    )
    return [str(row.application_id) for row in await conn.execute(query)]


def _run(row: RowMapping) -> Run:
    return record_of(Run, row, status=RunStatus(row["status"]))


def _finding(row: RowMapping) -> Finding:
    return record_of(
        Finding,
        row,
        kind=FindingKind(row["kind"]),
        action=FindingAction(row["action"]),
        status=FindingStatus(row["status"]),
    )


# -- runs -----------------------------------------------------------------------------------------


async def insert_run_if_absent(conn: AsyncConnection, run: Run) -> bool:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(runs).on_conflict_do_nothing()
    return (await conn.execute(statement, column_values(run))).rowcount == 1


async def run_of(
    conn: AsyncConnection, application_id: str, day: str, *, for_update: bool = False
) -> Run | None:
    query = select(runs).where(runs.c.application_id == application_id, runs.c.day == day)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).mappings().first()
    return _run(row) if row is not None else None


async def requeue(conn: AsyncConnection, run_id: str, now: datetime) -> None:
    await conn.execute(
        update(runs)
        .where(runs.c.id == run_id)
        .values(status=RunStatus.QUEUED.value, requested_at=now, error=None)
    )


async def count_waiting(conn: AsyncConnection, application_id: str) -> int:
    """The application's runs not finished (QUEUED or RUNNING)."""
    waiting = (RunStatus.QUEUED.value, RunStatus.RUNNING.value)
    query = select(func.count()).where(runs.c.application_id == application_id, runs.c.status.in_(waiting))
    return int((await conn.execute(query)).scalar_one())


async def due_runs(conn: AsyncConnection, now: datetime, limit: int) -> list[Run]:
    """The next run of each application with one waiting (its oldest request; or one whose
    worker's lease ran out), the application whose last run started longest ago (or never)
    first: round robin, so one application's backlog delays another's run by at most the runs
    already started."""
    due = (
        select(
            runs,
            func.row_number()
            .over(partition_by=runs.c.application_id, order_by=(runs.c.requested_at, runs.c.id))
            .label("place"),
        )
        .where(_claimable(now))
        .subquery()
    )
    started = runs.alias("started")
    last_started = (
        select(func.max(started.c.started_at))
        .where(started.c.application_id == due.c.application_id)
        .scalar_subquery()
    )
    query = (
        select(*(due.c[column.name] for column in runs.columns))
        .where(due.c.place == 1)
        .order_by(last_started.asc().nulls_first(), due.c.requested_at, due.c.id)
        .limit(limit)
    )
    return [_run(row) for row in (await conn.execute(query)).mappings()]


def _claimable(now: datetime) -> ColumnElement[bool]:
    return or_(
        runs.c.status == RunStatus.QUEUED.value,
        and_(runs.c.status == RunStatus.RUNNING.value, runs.c.lease_until < now),
    )


async def claim(conn: AsyncConnection, run_id: str, now: datetime, until: datetime) -> bool:
    """Compare-and-set: True for the one worker that takes the run."""
    statement = (
        update(runs)
        .where(runs.c.id == run_id, _claimable(now))
        .values(status=RunStatus.RUNNING.value, started_at=now, lease_until=until)
    )
    return (await conn.execute(statement)).rowcount == 1


async def finish(
    conn: AsyncConnection,
    run_id: str,
    status: RunStatus,
    summary: JsonObject | None,
    error: str | None,
    now: datetime,
) -> None:
    await conn.execute(
        update(runs)
        .where(runs.c.id == run_id)
        .values(status=status.value, summary=summary, error=error, finished_at=now, lease_until=None)
    )


# -- findings -------------------------------------------------------------------------------------


async def insert_finding_if_absent(conn: AsyncConnection, finding: Finding) -> bool:
    """False when the same (application, provider, kind, subject) was found before."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(findings).on_conflict_do_nothing()
    return (await conn.execute(statement, column_values(finding))).rowcount == 1


async def findings_of_day(conn: AsyncConnection, application_id: str, day: str) -> list[Finding]:
    query = (
        select(findings)
        .where(findings.c.application_id == application_id, findings.c.day == day)
        .order_by(findings.c.provider, findings.c.created_at, findings.c.id)
    )
    return [_finding(row) for row in (await conn.execute(query)).mappings()]


async def finding_of(conn: AsyncConnection, application_id: str, finding_id: str) -> Finding | None:
    query = select(findings).where(findings.c.application_id == application_id, findings.c.id == finding_id)
    row = (await conn.execute(query)).mappings().first()
    return _finding(row) if row is not None else None


async def resolve(conn: AsyncConnection, finding_id: str, note: str, now: datetime) -> bool:
    statement = (
        update(findings)
        .where(findings.c.id == finding_id, findings.c.status == FindingStatus.OPEN.value)
        .values(status=FindingStatus.RESOLVED.value, note=note, resolved_at=now)
    )
    return (await conn.execute(statement)).rowcount == 1
