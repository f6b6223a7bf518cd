"""All SQL of provider B's simulated preferences, payments and refunds (its notifications are
the simulator's outbox's).

Statements are built once, with bind parameters for the values (docs/performance-decisions.md,
"Statements built once"); an update's own parameters take a b_ prefix, as its table's column
names are the SET clause's."""

from __future__ import annotations

from datetime import datetime
from functools import cache

from sqlalchemy import Column, Integer, Row, Select, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.prepared import Prepared
from payorch.db.records import column_values, record_of
from payorch.db.tables.simulator import (
    simulator_b_payments as payments,
)
from payorch.db.tables.simulator import (
    simulator_b_preferences as preferences,
)
from payorch.db.tables.simulator import (
    simulator_b_refunds as refunds,
)
from payorch.simulator.provider_b.records import (
    CheckedPreference,
    SimBPayment,
    SimBPreference,
    SimBRefund,
    SimBStatusChange,
)
from payorch.simulator.repository import owned

OPEN_STATUSES = ("pending", "in_process")

AnyRow = Row[*tuple[object, ...]]


def _payment(row: AnyRow) -> SimBPayment:
    return SimBPayment(**row._mapping)


def _refund(row: AnyRow) -> SimBRefund:
    return SimBRefund(**row._mapping)


_INSERT_PREFERENCE = insert(preferences)


async def insert_preference(
    conn: AsyncConnection, preference_id: str, owner: str, checked: CheckedPreference, now: datetime
) -> None:
    await conn.execute(
        _INSERT_PREFERENCE,
        {"id": preference_id, "owner": owner, "created_at": now, **column_values(checked)},
    )


async def get_preference(
    conn: AsyncConnection,
    preference_id: str,
    *,
    owner: str | None = None,
    for_update: bool = False,
) -> SimBPreference | None:
    return await owned(
        conn, SimBPreference, preferences, "id", preference_id, owner=owner, for_update=for_update
    )


_PREFERENCES_FOR_REFERENCE = (
    select(preferences.c.id)
    .where(
        preferences.c.owner == bindparam("owner"),
        preferences.c.external_reference == bindparam("external_reference"),
    )
    .order_by(preferences.c.created_at.desc())
)


async def preference_ids_for_reference(conn: AsyncConnection, owner: str, reference: str) -> list[str]:
    """The owner's preferences carrying ``reference``, newest first."""
    rows = await conn.execute(_PREFERENCES_FOR_REFERENCE, {"owner": owner, "external_reference": reference})
    return [str(row.id) for row in rows]


# No values(): the SET clause is the columns named by the parameters (the checked preference's
# fields); SQLAlchemy compiles it once per set of names.
_UPDATE_PREFERENCE = update(preferences).where(preferences.c.id == bindparam("b_id"))


async def update_preference(
    conn: AsyncConnection, preference_id: str, checked: CheckedPreference
) -> None:
    await conn.execute(_UPDATE_PREFERENCE, {"b_id": preference_id, **column_values(checked)})


_INSERT_PAYMENT = insert(payments)


async def insert_payment(conn: AsyncConnection, payment: SimBPayment) -> None:
    await conn.execute(_INSERT_PAYMENT, column_values(payment))


async def get_payment(
    conn: AsyncConnection, payment_id: int, *, owner: str | None = None, for_update: bool = False
) -> SimBPayment | None:
    return await owned(
        conn, SimBPayment, payments, "id", payment_id, owner=owner, for_update=for_update
    )


_PAYMENTS_OF_PREFERENCE = Prepared(
    select(payments)
    .where(payments.c.preference_id == bindparam("preference_id"))
    .order_by(payments.c.date_created)
)


async def payments_of_preference(conn: AsyncConnection, preference_id: str) -> list[SimBPayment]:
    rows = await _PAYMENTS_OF_PREFERENCE.all(conn, {"preference_id": preference_id})
    return [record_of(SimBPayment, row) for row in rows]


def _owner_payments_by(column: Column[str]) -> Select[*tuple[object, ...]]:
    """The owner's payments whose ``column`` is the parameter of its name, oldest first."""
    return (
        select(payments)
        .where(payments.c.owner == bindparam("owner"), column == bindparam(column.key))
        .order_by(payments.c.date_created)
    )


_FOR_REFERENCE = _owner_payments_by(payments.c.external_reference).with_for_update()
_FOR_REFERENCE_IN_STATUSES = _FOR_REFERENCE.where(
    payments.c.status.in_(bindparam("statuses", expanding=True))
)


async def payments_for_reference(
    conn: AsyncConnection, owner: str, reference: str, statuses: tuple[str, ...] | None = None
) -> list[SimBPayment]:
    """The owner's payments carrying ``reference`` (only in ``statuses`` when given), oldest
    first, locked."""
    params: dict[str, object] = {"owner": owner, "external_reference": reference}
    if statuses is None:
        rows = await conn.execute(_FOR_REFERENCE, params)
    else:
        params["statuses"] = list(statuses)
        rows = await conn.execute(_FOR_REFERENCE_IN_STATUSES, params)
    return [_payment(row) for row in rows]


_PAYMENTS_OF_MERCHANT_ORDER = _owner_payments_by(payments.c.merchant_order_id)


async def payments_of_merchant_order(
    conn: AsyncConnection, owner: str, merchant_order_id: int
) -> list[SimBPayment]:
    params = {"owner": owner, "merchant_order_id": merchant_order_id}
    rows = await conn.execute(_PAYMENTS_OF_MERCHANT_ORDER, params)
    return [_payment(row) for row in rows]


# No values(): the SET clause is the columns named by the parameters (those the change sets);
# SQLAlchemy compiles it once per set of names.
_SET_PAYMENT_STATUS = update(payments).where(
    payments.c.id == bindparam("b_id"),
    payments.c.status.in_(bindparam("b_expected", expanding=True)),
)


async def set_payment_status(
    conn: AsyncConnection, payment_id: int, expected: tuple[str, ...], change: SimBStatusChange
) -> bool:
    """Compare-and-set on the status, so two settlements cannot both apply."""
    values: dict[str, object] = {
        "b_id": payment_id,
        "b_expected": list(expected),
        "status": change.status,
        "status_detail": change.status_detail,
        "date_last_updated": change.date_last_updated,
    }
    if change.date_approved is not None:
        values["date_approved"] = change.date_approved
    if change.authorization_code is not None:
        values["authorization_code"] = change.authorization_code
    if change.refunded_hundredths is not None:
        values["refunded_hundredths"] = change.refunded_hundredths
    result = await conn.execute(_SET_PAYMENT_STATUS, values)
    return result.rowcount == 1


_SORTS = {
    "date_created": payments.c.date_created,
    "date_approved": payments.c.date_approved,
    "date_last_updated": payments.c.date_last_updated,
    "id": payments.c.id,
}
_FILTERS = {
    "external_reference": payments.c.external_reference,
    "status": payments.c.status,
    "id": payments.c.id,
}


@cache
def _search_statements(
    filtered: tuple[str, ...], sort: str, descending: bool, ranged: bool = False
) -> tuple[Select[int], Select[*tuple[object, ...]]]:
    """The count and the page of a search, built once per set of filters, sort and order.
    ``ranged``: date_created within [begin_date, end_date)."""
    conditions = [payments.c.owner == bindparam("owner")]
    conditions += [_FILTERS[name] == bindparam(name) for name in filtered]
    if ranged:
        conditions += [
            payments.c.date_created >= bindparam("begin_date", type_=payments.c.date_created.type),
            payments.c.date_created < bindparam("end_date", type_=payments.c.date_created.type),
        ]
    total = select(func.count()).select_from(payments).where(*conditions)
    column = _SORTS[sort]
    order = (
        [column.desc(), payments.c.id.desc()] if descending else [column.asc(), payments.c.id.asc()]
    )
    page = (
        select(payments)
        .where(*conditions)
        .order_by(*order)
        .limit(bindparam("limit", type_=Integer))
        .offset(bindparam("offset", type_=Integer))
    )
    return total, page


async def search_payments(
    conn: AsyncConnection,
    owner: str,
    filters: dict[str, str],
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
    created: tuple[datetime, datetime] | None = None,
) -> tuple[int, list[SimBPayment]]:
    filtered = tuple(name for name in _FILTERS if name in filters)
    count, page = _search_statements(
        filtered, sort if sort in _SORTS else "date_created", descending, created is not None
    )
    params: dict[str, object] = {
        name: int(filters[name]) if name == "id" else filters[name] for name in filtered
    }
    params["owner"] = owner
    if created is not None:
        params["begin_date"], params["end_date"] = created
    total = (await conn.execute(count, params)).scalar_one()
    rows = await conn.execute(page, {**params, "limit": limit, "offset": offset})
    return int(total), [_payment(row) for row in rows]


_INSERT_REFUND = insert(refunds)


async def insert_refund(conn: AsyncConnection, refund: SimBRefund) -> None:
    await conn.execute(_INSERT_REFUND, column_values(refund))


_REFUNDS_OF = (
    select(refunds).where(refunds.c.payment_id == bindparam("payment_id")).order_by(refunds.c.id)
)


async def refunds_of(conn: AsyncConnection, payment_id: int) -> list[SimBRefund]:
    rows = await conn.execute(_REFUNDS_OF, {"payment_id": payment_id})
    return [_refund(row) for row in rows]


_PURGES = tuple(
    delete(table).where(table.c.owner == bindparam("owner"), made < bindparam("before"))
    for table, made in (
        (refunds, refunds.c.date_created),
        (payments, payments.c.date_created),
        (preferences, preferences.c.created_at),
    )
)


async def delete_older_than(conn: AsyncConnection, owner: str, before: datetime) -> int:
    """Delete ``owner``'s preferences, payments and refunds made before
    ``before`` (the public owner's purge); how many rows went."""
    gone = 0
    for purge in _PURGES:
        result = await conn.execute(purge, {"owner": owner, "before": before})
        gone += result.rowcount
    return gone
