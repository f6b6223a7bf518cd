"""All SQL of payments and their refunds.

Every statement but the page's is built once, at import, with bind parameters for what varies:
building one per call cost more CPU than running it (docs/performance-decisions.md, "Statements built
once"). In the updates, no bind parameter is named after a column: SQLAlchemy keeps those
names for the SET clause.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import TypeVar

from sqlalchemy import Integer, Select, Update, bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.prepared import Prepared
from payorch.db.tables.providers import payments
from payorch.db.tables.refunds import refunds
from payorch.payments.records import Payment, Refund

PENDING, SUCCEEDED, FAILED = "PENDING", "SUCCEEDED", "FAILED"

_INSERT_PAYMENT = Prepared(insert(payments))
_PAYMENT_COLUMNS = tuple(payments.c.keys())


async def insert_payment(conn: AsyncConnection, payment: Payment) -> None:
    """Record a payment. The unique payment_intent_id makes a second authorization fail here."""
    await _INSERT_PAYMENT.execute(conn, {name: getattr(payment, name) for name in _PAYMENT_COLUMNS})


_FOR_INTENT = select(payments).where(payments.c.payment_intent_id == bindparam("payment_intent_id"))


async def for_intent(conn: AsyncConnection, payment_intent_id: str) -> Payment | None:
    return await _one(conn, _FOR_INTENT, {"payment_intent_id": payment_intent_id}, Payment)


_ReadAndLock = tuple[Select[*tuple[object, ...]], Select[*tuple[object, ...]]]


def _read_and_lock(query: Select[*tuple[object, ...]]) -> _ReadAndLock:
    """The read as it is and FOR UPDATE (SQLite: BEGIN IMMEDIATE already serializes writers)."""
    return query, query.with_for_update()


_GET = _read_and_lock(
    select(payments).where(
        payments.c.id == bindparam("payment_id"),
        payments.c.application_id == bindparam("application_id"),
    )
)


async def get(
    conn: AsyncConnection, application_id: str, payment_id: str, *, for_update: bool = False
) -> Payment | None:
    params = {"payment_id": payment_id, "application_id": application_id}
    return await _one(conn, _GET[for_update], params, Payment)


_GET_ANY = _read_and_lock(select(payments).where(payments.c.id == bindparam("payment_id")))


async def get_any(conn: AsyncConnection, payment_id: str, *, for_update: bool = False) -> Payment | None:
    """By id alone: for the worker, which has no caller."""
    return await _one(conn, _GET_ANY[for_update], {"payment_id": payment_id}, Payment)


_BY_PROVIDER_REFERENCE = _read_and_lock(
    select(payments).where(
        payments.c.provider == bindparam("provider"),
        payments.c.provider_reference == bindparam("provider_reference"),
        payments.c.application_id == bindparam("application_id"),
    )
)


_NOTE_CODE = Prepared(
    update(payments)
    .where(
        payments.c.provider == bindparam("b_provider"),
        payments.c.provider_reference == bindparam("b_reference"),
        payments.c.application_id == bindparam("b_application_id"),
        payments.c.authorization_code.is_(None),
    )
    .values(authorization_code=bindparam("code"))
)


async def note_authorization_code(
    conn: AsyncConnection, application_id: str, provider: str, provider_reference: str, code: str
) -> None:
    """The issuer's code of a payment recorded without one (the first said counts)."""
    params = {
        "b_provider": provider,
        "b_reference": provider_reference,
        "b_application_id": application_id,
        "code": code,
    }
    await _NOTE_CODE.execute(conn, params)


async def by_provider_reference(
    conn: AsyncConnection,
    application_id: str,
    provider: str,
    provider_reference: str,
    *,
    for_update: bool = False,
) -> Payment | None:
    """The application's payment the provider knows as ``provider_reference``."""
    params = {
        "provider": provider,
        "provider_reference": provider_reference,
        "application_id": application_id,
    }
    return await _one(conn, _BY_PROVIDER_REFERENCE[for_update], params, Payment)


_THIS_PAYMENT = payments.c.id == bindparam("payment_id")


@cache
def _set_dispute_statement(opened: bool, closed: bool) -> Update:
    """set_dispute's update for the dates given (4 statements, each built once)."""
    values: dict[str, object] = {"dispute_status": bindparam("dispute"), "dispute_kind": bindparam("kind")}
    if opened:
        values.update(disputed_at=bindparam("disputed"), dispute_closed_at=None)
    if closed:
        values["dispute_closed_at"] = bindparam("closed")
    return update(payments).where(_THIS_PAYMENT).values(values)


async def set_dispute(
    conn: AsyncConnection,
    payment_id: str,
    status: str,
    kind: str | None,
    *,
    disputed_at: datetime | None = None,
    closed_at: datetime | None = None,
) -> None:
    """A dispute opens (``disputed_at``, clears an earlier end) or ends (``closed_at``)."""
    params: dict[str, object] = {"payment_id": payment_id, "dispute": status, "kind": kind}
    if disputed_at is not None:
        params["disputed"] = disputed_at
    if closed_at is not None:
        params["closed"] = closed_at
    statement = _set_dispute_statement(disputed_at is not None, closed_at is not None)
    await conn.execute(statement, params)


_SET_DISPUTE_ORDER = (
    update(payments)
    .where(_THIS_PAYMENT)
    .values(
        dispute_reference=bindparam("reference"),
        dispute_observed_at=bindparam("observed_at"),
        dispute_rank=bindparam("rank"),
    )
)


async def set_dispute_order(
    conn: AsyncConnection, payment_id: str, reference: str | None, observed_at: datetime | None, rank: int
) -> None:
    """The newest dispute observation applied, in the provider's order (payments/disputes.py)."""
    params = {"payment_id": payment_id, "reference": reference, "observed_at": observed_at, "rank": rank}
    await conn.execute(_SET_DISPUTE_ORDER, params)


# The page's statement is built per call: its filters are optional, and it is no hot path.
async def page(
    conn: AsyncConnection,
    application_id: str,
    *,
    status: str | None,
    lowest_id: str | None,
    below_id: str | None,
    limit: int,
) -> list[Payment]:
    """Newest first, keyset: ``id < below_id`` on the (application_id[, status], id) index, so a
    page costs the same however many payments precede it. Ids are time-ordered."""
    query = select(payments).where(payments.c.application_id == application_id)
    if status is not None:
        query = query.where(payments.c.status == status)
    if lowest_id is not None:
        query = query.where(payments.c.id >= lowest_id)
    if below_id is not None:
        query = query.where(payments.c.id < below_id)
    query = query.order_by(payments.c.id.desc()).limit(limit)
    return [Payment(**row) for row in (await conn.execute(query)).mappings()]


_SET_REFUNDED = (
    update(payments)
    .where(_THIS_PAYMENT)
    .values(refunded_amount=bindparam("refunded"), status=bindparam("new_status"))
)


async def set_refunded(conn: AsyncConnection, payment_id: str, *, refunded_amount: int, status: str) -> None:
    params = {"payment_id": payment_id, "refunded": refunded_amount, "new_status": status}
    await conn.execute(_SET_REFUNDED, params)


_R = TypeVar("_R", Payment, Refund)


async def _one(
    conn: AsyncConnection,
    query: Select[*tuple[object, ...]],
    params: Mapping[str, object],
    record: type[_R],
) -> _R | None:
    row = (await conn.execute(query, params)).mappings().first()
    return record(**row) if row is not None else None  # the record's fields are the columns


# --- refunds ---------------------------------------------------------------------------------

_INSERT_REFUND = insert(refunds)
_REFUND_COLUMNS = tuple(refunds.c.keys())


async def insert_refund(conn: AsyncConnection, refund: Refund) -> None:
    await conn.execute(_INSERT_REFUND, {name: getattr(refund, name) for name in _REFUND_COLUMNS})


_GET_REFUND = _read_and_lock(select(refunds).where(refunds.c.id == bindparam("refund_id")))


async def get_refund(conn: AsyncConnection, refund_id: str, *, for_update: bool = False) -> Refund | None:
    return await _one(conn, _GET_REFUND[for_update], {"refund_id": refund_id}, Refund)


_REFUND_BY_KEY = select(refunds).where(
    refunds.c.payment_id == bindparam("payment_id"), refunds.c.idempotency_key == bindparam("key")
)


async def refund_by_key(conn: AsyncConnection, payment_id: str, key: str) -> Refund | None:
    return await _one(conn, _REFUND_BY_KEY, {"payment_id": payment_id, "key": key}, Refund)


_PENDING_TOTAL = select(func.coalesce(func.sum(refunds.c.amount), 0)).where(
    refunds.c.payment_id == bindparam("payment_id"), refunds.c.status == PENDING
)


async def pending_total(conn: AsyncConnection, payment_id: str) -> int:
    """What PENDING refunds have reserved: not yet refunded, no longer available."""
    return int((await conn.execute(_PENDING_TOTAL, {"payment_id": payment_id})).scalar_one())


_REFUNDS_OF = (
    select(refunds).where(refunds.c.payment_id == bindparam("payment_id")).order_by(refunds.c.id.desc())
)


async def refunds_of(conn: AsyncConnection, payment_id: str) -> list[Refund]:
    result = await conn.execute(_REFUNDS_OF, {"payment_id": payment_id})
    return [Refund(**row) for row in result.mappings()]


# A settled refund never changes again: each change below is a compare-and-set on PENDING.


def _change_pending(**values: object) -> Update:
    return (
        update(refunds)
        .where(refunds.c.id == bindparam("refund_id"), refunds.c.status == PENDING)
        .values(**values)
    )


_MARK_REFUND_SUCCEEDED = _change_pending(
    status=SUCCEEDED,
    provider_refund_id=bindparam("provider_refund"),
    next_check_at=None,
    updated_at=bindparam("at"),
)


async def mark_refund_succeeded(
    conn: AsyncConnection, refund_id: str, *, provider_refund_id: str | None, at: datetime
) -> bool:
    params = {"refund_id": refund_id, "provider_refund": provider_refund_id, "at": at}
    result = await conn.execute(_MARK_REFUND_SUCCEEDED, params)
    return result.rowcount == 1


_MARK_REFUND_FAILED = _change_pending(
    status=FAILED,
    failure_reason=bindparam("failure"),
    idempotency_key=None,  # the key is released: a retry with it runs again
    next_check_at=None,
    updated_at=bindparam("at"),
)


async def mark_refund_failed(
    conn: AsyncConnection, refund_id: str, *, failure_reason: str, at: datetime
) -> bool:
    params = {"refund_id": refund_id, "failure": failure_reason, "at": at}
    result = await conn.execute(_MARK_REFUND_FAILED, params)
    return result.rowcount == 1


_POSTPONE_REFUND_CHECK = _change_pending(next_check_at=bindparam("next_check"), updated_at=bindparam("at"))


async def postpone_refund_check(
    conn: AsyncConnection, refund_id: str, *, next_check_at: datetime, at: datetime
) -> bool:
    params = {"refund_id": refund_id, "next_check": next_check_at, "at": at}
    result = await conn.execute(_POSTPONE_REFUND_CHECK, params)
    return result.rowcount == 1


_DUE_REFUNDS = (
    select(refunds.c.id)
    .where(refunds.c.status == PENDING, refunds.c.next_check_at <= bindparam("now"))
    .order_by(refunds.c.next_check_at)
    .limit(bindparam("batch", type_=Integer))
    .with_for_update(skip_locked=True)
)
_LEASE_DUE_REFUNDS = (
    update(refunds)
    .where(refunds.c.id.in_(bindparam("ids", expanding=True)))
    .values(next_check_at=bindparam("lease"), checks=refunds.c.checks + 1)
)


async def claim_due_refunds(
    conn: AsyncConnection, now: datetime, lease_until: datetime, batch: int
) -> list[str]:
    """PENDING refunds whose check is due; leased so that another worker skips them."""
    ids = list((await conn.execute(_DUE_REFUNDS, {"now": now, "batch": batch})).scalars())
    if ids:
        await conn.execute(_LEASE_DUE_REFUNDS, {"ids": ids, "lease": lease_until})
    return ids
