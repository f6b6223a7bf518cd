"""The exports' SQL: reads of the payments and refunds tables (another domain's tables, read only).

Rows come in keyset batches, oldest first (``id > after`` on the list's own index, each batch a
query of its own), so an export of any size holds one batch at a time and no transaction or lock
stays open between batches. The statements are built once, with bind parameters.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Integer,
    RowMapping,
    Select,
    String,
    Table,
    bindparam,
    func,
    select,
)
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from payorch.activity import repository as activity
from payorch.activity.records import Entry, Filters
from payorch.db.tables.providers import payments
from payorch.db.tables.refunds import refunds
from payorch.exports.records import Balance, RefundLine, Window
from payorch.ids import lowest_id
from payorch.payments.records import Payment, Refund
from payorch.payments.stats import TAKEN

SUCCEEDED = "SUCCEEDED"


class utc_day(FunctionElement[str]):  # noqa: N801 - used like a SQL function
    """The UTC day (YYYY-MM-DD) of a timestamp column, the same text on both databases."""

    type = String()
    inherit_cache = True


@compiles(utc_day)
def _utc_day_sqlite(element: utc_day, compiler: SQLCompiler, **kw: object) -> str:
    # SQLite keeps UTC timestamps as text, 'YYYY-MM-DD HH:MM:SS.ffffff' (db/types.py).
    return f"substr({compiler.process(element.clauses, **kw)}, 1, 10)"


@compiles(utc_day, "postgresql")
def _utc_day_postgresql(element: utc_day, compiler: SQLCompiler, **kw: object) -> str:
    # Literals, not bind parameters: GROUP BY must repeat the select's expression exactly.
    return f"to_char(({compiler.process(element.clauses, **kw)}) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


def _millis(moment: datetime) -> int:
    return max(0, int(moment.timestamp() * 1000))


def id_bounds(prefix: str, window: Window) -> dict[str, str]:
    """[from, to) as an id range: ids are time-ordered to the millisecond (payorch.ids), as the
    lists read their `from` and `to` (payorch.pagination.id_range)."""
    return {
        "lowest": lowest_id(prefix, _millis(window.from_)),
        "below": lowest_id(prefix, _millis(window.to)),
    }


_BATCH = bindparam("batch", type_=Integer)
_APPLICATION: BindParameter[str] = bindparam("application_id")


def _by_id(query: Select[*tuple[object, ...]], table: Table) -> Select[*tuple[object, ...]]:
    """``query``'s next batch: the application's rows of an id range, after ``after``."""
    return (
        query.where(
            table.c.application_id == _APPLICATION,
            table.c.id >= bindparam("lowest"),
            table.c.id < bindparam("below"),
            table.c.id > bindparam("after"),
        )
        .order_by(table.c.id)
        .limit(_BATCH)
    )


async def _id_batch(
    conn: AsyncConnection,
    statement: Select[*tuple[object, ...]],
    prefix: str,
    window: Window,
    after: str,
    batch: int,
) -> list[RowMapping]:
    params = {"application_id": window.application_id, "after": after, "batch": batch}
    result = await conn.execute(statement, {**params, **id_bounds(prefix, window)})
    return list(result.mappings())


_PAYMENTS = _by_id(select(payments), payments)


async def payments_after(conn: AsyncConnection, window: Window, after: str, batch: int) -> list[Payment]:
    """Payments created in the window (as GET /v1/payments?from=&to= lists them), after ``after``."""
    rows = await _id_batch(conn, _PAYMENTS, "pay", window, after, batch)
    return [Payment(**row) for row in rows]


_REFUND_COLUMNS = tuple(refunds.c.keys())
_REFUNDS = _by_id(
    select(
        refunds,
        payments.c.external_reference,
        payments.c.merchant_account_id,
        payments.c.provider,
    ).join(payments, payments.c.id == refunds.c.payment_id),
    refunds,
)


async def refunds_after(conn: AsyncConnection, window: Window, after: str, batch: int) -> list[RefundLine]:
    """Refunds created in the window, whatever their status, after ``after``."""
    rows = await _id_batch(conn, _REFUNDS, "rfd", window, after, batch)
    return [
        RefundLine(
            Refund(**{name: row[name] for name in _REFUND_COLUMNS}),
            row["external_reference"],
            row["merchant_account_id"],
            row["provider"],
        )
        for row in rows
    ]


_DISPUTES = (
    select(payments)
    .where(
        payments.c.application_id == _APPLICATION,
        payments.c.dispute_status.is_not(None),
        payments.c.disputed_at >= bindparam("from_"),
        payments.c.disputed_at < bindparam("to"),
        payments.c.id > bindparam("after"),
    )
    .order_by(payments.c.id)
    .limit(_BATCH)
)


async def disputes_after(conn: AsyncConnection, window: Window, after: str, batch: int) -> list[Payment]:
    """Payments whose (latest) dispute opened in the window, after payment ``after``. No index
    leads with disputed_at: the batches walk the application's payments once in all."""
    params = {
        "application_id": window.application_id,
        "from_": window.from_,
        "to": window.to,
        "after": after,
        "batch": batch,
    }
    return [Payment(**row) for row in (await conn.execute(_DISPUTES, params)).mappings()]


def _totals(day: ColumnElement[object], amount: ColumnElement[int]) -> Select[str, str, str, int]:
    day_of = utc_day(day)
    return select(day_of, payments.c.currency, payments.c.provider, func.sum(amount)).group_by(
        day_of, payments.c.currency, payments.c.provider
    )


AUTOMATIC, MANUAL, HELD = "automatic", "manual", "REQUIRES_CAPTURE"
_CREATED_IN_WINDOW = (
    payments.c.application_id == _APPLICATION,
    payments.c.id >= bindparam("lowest"),
    payments.c.id < bindparam("below"),
)
# Money taken on a day: automatic payments on the day they were made, holds on the day captured
# (as the provider's balance counts a capture).
_AUTHORIZED = _totals(payments.c.created_at, payments.c.amount).where(
    *_CREATED_IN_WINDOW, payments.c.capture_method == AUTOMATIC
)
_CAPTURED = _totals(payments.c.captured_at, payments.c.amount_captured).where(
    payments.c.application_id == _APPLICATION,
    payments.c.capture_method == MANUAL,
    payments.c.captured_at >= bindparam("from_"),
    payments.c.captured_at < bindparam("to"),
)
# Holds made that day and still held: shown apart, never money taken.
_STILL_HELD = _totals(payments.c.created_at, payments.c.amount).where(
    *_CREATED_IN_WINDOW, payments.c.status == HELD
)
_REFUNDED = (
    _totals(refunds.c.created_at, refunds.c.amount)
    .join_from(refunds, payments, payments.c.id == refunds.c.payment_id)
    .where(
        refunds.c.application_id == _APPLICATION,
        refunds.c.id >= bindparam("lowest"),
        refunds.c.id < bindparam("below"),
        refunds.c.status == SUCCEEDED,
    )
)


def _disputed(status: str) -> Select[str, str, str, int]:
    """The amounts of the disputes opened in the window that are now ``status``."""
    return _totals(payments.c.disputed_at, TAKEN).where(
        payments.c.application_id == _APPLICATION,
        payments.c.dispute_status == status,
        payments.c.disputed_at >= bindparam("from_"),
        payments.c.disputed_at < bindparam("to"),
    )


# Away from the merchant: held while open (the provider takes it when the dispute opens and gives
# it back if won), gone when lost. A won dispute is not counted.
_HELD, _LOST = _disputed("OPEN"), _disputed("LOST")


async def balances(conn: AsyncConnection, window: Window) -> list[Balance]:
    """Per UTC day, currency and provider: money taken that day (payments captured when
    authorized, made that day; holds captured that day), refunds that succeeded among those
    created that day, amounts of disputes opened that day still open (held) and lost, and holds
    made that day still held. A handful of rows per day: read whole."""
    application = {"application_id": window.application_id}
    opened = {**application, "from_": window.from_, "to": window.to}
    made = {**application, **id_bounds("pay", window)}
    found: dict[tuple[str, str, str], list[int]] = {}
    for position, statement, params in (
        (0, _AUTHORIZED, made),
        (0, _CAPTURED, opened),
        (1, _REFUNDED, {**application, **id_bounds("rfd", window)}),
        (2, _HELD, opened),
        (3, _LOST, opened),
        (4, _STILL_HELD, made),
    ):
        for day, currency, provider, total in await conn.execute(statement, params):
            found.setdefault((day, currency, provider), [0, 0, 0, 0, 0])[position] += int(total)
    return [Balance(*key, *amounts) for key, amounts in sorted(found.items())]


async def activity_after(conn: AsyncConnection, window: Window, after: str, batch: int) -> list[Entry]:
    """Activity entries at in the window matching its filters, oldest first by seq (the chain's
    order), after seq ``after`` (the activity domain's read)."""
    given = window.activity or Filters(window.application_id)
    filters = Filters(
        window.application_id, given.actor_id, given.action, given.resource_id, window.from_, window.to
    )
    return await activity.oldest_after(conn, filters, after_seq=int(after or 0), upto_seq=None, limit=batch)
