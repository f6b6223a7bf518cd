"""All SQL of checkouts (and the worker's claims on them).

Every statement is built once, at import, with bind parameters for what varies: building one
per call cost more CPU than running it (docs/performance-decisions.md, "Statements built once").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache

from sqlalchemy import Integer, bindparam, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.checkouts.records import Checkout, CheckoutStatus
from payorch.db.prepared import Prepared
from payorch.db.records import Row as RowData
from payorch.db.records import column_values, record_of
from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import checkouts
from payorch.db.types import UtcDateTime


def _texts(value: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _checkout(data: RowData) -> Checkout:
    return record_of(
        Checkout,
        data,
        status=CheckoutStatus(str(data["status"])),
        fields=_texts(data["fields"]),
        provider_data=_texts(data["provider_data"]),
    )


def _maybe(row: RowData | None) -> Checkout | None:
    return _checkout(row) if row is not None else None


_INSERT = Prepared(insert(checkouts))  # executed with the record's column values


async def insert_checkout(conn: AsyncConnection, checkout: Checkout) -> None:
    await _INSERT.execute(conn, column_values(checkout))


_ACTIVE_FOR_INTENT = Prepared(
    select(checkouts)
    .where(
        checkouts.c.payment_intent_id == bindparam("payment_intent_id"),
        checkouts.c.status == CheckoutStatus.ACTIVE.value,
    )
    # Ids follow creation within a process (payorch.ids): two made in one instant (a frozen
    # clock) still give the newest, on either database.
    .order_by(checkouts.c.created_at.desc(), checkouts.c.id.desc())
    .limit(1)
)


async def active_for_intent(conn: AsyncConnection, payment_intent_id: str) -> Checkout | None:
    return _maybe(await _ACTIVE_FOR_INTENT.first(conn, {"payment_intent_id": payment_intent_id}))


_FOR_INTENT = (
    select(checkouts)
    .where(checkouts.c.payment_intent_id == bindparam("payment_intent_id"))
    .order_by(checkouts.c.created_at, checkouts.c.id)
)


async def for_intent(conn: AsyncConnection, payment_intent_id: str) -> list[Checkout]:
    """Every checkout of the intent, oldest first."""
    result = await conn.execute(_FOR_INTENT, {"payment_intent_id": payment_intent_id})
    return [_checkout(row) for row in result.mappings().all()]


_GET = Prepared(select(checkouts).where(checkouts.c.id == bindparam("checkout_id")))


async def get(conn: AsyncConnection, checkout_id: str) -> Checkout | None:
    return _maybe(await _GET.first(conn, {"checkout_id": checkout_id}))


# In the updates, no bind parameter is named after a column: SQLAlchemy keeps those names for
# the SET clause.
_THIS_CHECKOUT = checkouts.c.id == bindparam("checkout_id")

_REPLACE = (
    update(checkouts)
    .where(_THIS_CHECKOUT, checkouts.c.status == CheckoutStatus.ACTIVE.value)
    .values(
        status=CheckoutStatus.REPLACED.value,
        closed_at=bindparam("at"),
        next_check_at=None,
        lease_until=None,
    )
)


async def replace(conn: AsyncConnection, checkout_id: str, at: datetime) -> bool:
    """ACTIVE -> REPLACED, compare-and-set: False if someone else replaced or closed it first."""
    result = await conn.execute(_REPLACE, {"checkout_id": checkout_id, "at": at})
    return result.rowcount == 1


@cache
def _record_result_statement(reference: bool, schedule: bool, close: bool, release: bool) -> Prepared:
    """record_result's update for the parts given (at most 15 statements, each built once)."""
    values: dict[str, object] = {"lease_until": None} if release else {}
    if reference:
        values["payment_reference"] = bindparam("payment_ref")
    if schedule:
        values.update(next_check_at=bindparam("first_check_at"), check_attempts=0)
    if close:
        values.update(
            status=CheckoutStatus.CLOSED.value, closed_at=bindparam("at"), next_check_at=None
        )
    return Prepared(update(checkouts).where(_THIS_CHECKOUT).values(values))


async def record_result(
    conn: AsyncConnection,
    checkout_id: str,
    *,
    payment_reference: str | None,
    first_check_at: datetime | None,
    closed_at: datetime | None,
    release_lease: bool = False,
) -> None:
    """After a provider's answer, in one statement: remember the provider's payment reference
    (when given), schedule reconciliation from ``first_check_at`` (attempts start again), or
    close the checkout at ``closed_at`` (the intent reached a final outcome); and free the
    lease when ``release_lease``."""
    reference, schedule, close = bool(payment_reference), first_check_at is not None, closed_at is not None
    if not (reference or schedule or close or release_lease):
        return
    params: dict[str, object] = {"checkout_id": checkout_id}
    if reference:
        params["payment_ref"] = payment_reference
    if schedule and not close:  # closing clears next_check_at instead
        params["first_check_at"] = first_check_at
    if close:
        params["at"] = closed_at
    await _record_result_statement(reference, schedule, close, release_lease).execute(conn, params)


_RESCHEDULE = (
    update(checkouts)
    .where(_THIS_CHECKOUT)
    .values(next_check_at=bindparam("next_check"), lease_until=None)
)


async def reschedule(conn: AsyncConnection, checkout_id: str, next_check_at: datetime) -> None:
    """Look at it again at ``next_check_at``, and free its lease."""
    await conn.execute(_RESCHEDULE, {"checkout_id": checkout_id, "next_check": next_check_at})


_STOP_CHECKING = update(checkouts).where(_THIS_CHECKOUT).values(next_check_at=None, lease_until=None)


async def stop_checking(conn: AsyncConnection, checkout_id: str) -> None:
    """No more looks by the worker (next_check_at cleared), lease freed; the checkout stays."""
    await conn.execute(_STOP_CHECKING, {"checkout_id": checkout_id})


_NOW = bindparam("now", type_=UtcDateTime)
_LEASE_FREE = or_(checkouts.c.lease_until.is_(None), checkouts.c.lease_until <= _NOW)

# Only an ACTIVE checkout is leased: a cancel (or a replacement) that closed it between the
# caller's read and this statement has won, and no provider call may follow (provider A's
# token would be committed after the cancel).
_TAKE_LEASE = Prepared(
    update(checkouts)
    .where(_THIS_CHECKOUT, checkouts.c.status == CheckoutStatus.ACTIVE.value, _LEASE_FREE)
    .values(lease_until=bindparam("until"))
)


async def take_lease(conn: AsyncConnection, checkout_id: str, now: datetime, until: datetime) -> bool:
    """Claim the right to talk to the provider about this checkout (one actor at a time), if it
    is still ACTIVE."""
    parameters = {"checkout_id": checkout_id, "now": now, "until": until}
    return await _TAKE_LEASE.rowcount(conn, parameters) == 1


_RELEASE_LEASE = Prepared(update(checkouts).where(_THIS_CHECKOUT).values(lease_until=None))


async def release_lease(conn: AsyncConnection, checkout_id: str) -> None:
    await _RELEASE_LEASE.execute(conn, {"checkout_id": checkout_id})


_BUYER_RETURNED = Prepared(
    update(checkouts)
    .where(_THIS_CHECKOUT, checkouts.c.buyer_returned_at.is_(None))
    .values(buyer_returned_at=bindparam("at", type_=UtcDateTime))
)


async def mark_buyer_returned(conn: AsyncConnection, checkout_id: str, at: datetime) -> None:
    """The buyer came back through the checkout's return, the provider having confirmed it (the
    first time counts)."""
    await _BUYER_RETURNED.execute(conn, {"checkout_id": checkout_id, "at": at})


_DUE = (
    select(checkouts.c.id)
    # Reads payment_intents (the intents domain's table): the join is the point, so the
    # claim picks due checkouts by their intent's status in one locked statement.
    .join(intents, intents.c.id == checkouts.c.payment_intent_id)
    .where(
        checkouts.c.status == CheckoutStatus.ACTIVE.value,
        checkouts.c.next_check_at <= _NOW,
        _LEASE_FREE,
        intents.c.status.in_(bindparam("intent_statuses", expanding=True)),
    )
    .order_by(checkouts.c.next_check_at)
    .limit(bindparam("limit", type_=Integer))
)
_DUE_SKIP_LOCKED = _DUE.with_for_update(skip_locked=True, of=checkouts)
_CLAIMED_IDS = checkouts.c.id.in_(bindparam("ids", expanding=True))
_LEASE_CLAIMED = (
    update(checkouts)
    .where(_CLAIMED_IDS)
    .values(lease_until=bindparam("until"), check_attempts=checkouts.c.check_attempts + 1)
)
_CLAIMED = select(checkouts).where(_CLAIMED_IDS)


async def claim_due(
    conn: AsyncConnection,
    *,
    intent_statuses: tuple[str, ...],
    now: datetime,
    lease_until: datetime,
    limit: int,
    skip_locked: bool,
) -> list[Checkout]:
    """Lease up to ``limit`` ACTIVE checkouts that are due, whose intent is in ``intent_statuses``.

    PostgreSQL: FOR UPDATE SKIP LOCKED, so several workers split the work without waiting on
    each other; SQLite's BEGIN IMMEDIATE already serializes the claim.
    """
    query = _DUE_SKIP_LOCKED if skip_locked else _DUE
    params = {"now": now, "intent_statuses": list(intent_statuses), "limit": limit}
    ids = [row.id for row in (await conn.execute(query, params)).all()]
    if not ids:
        return []
    await conn.execute(_LEASE_CLAIMED, {"ids": ids, "until": lease_until})
    claimed = await conn.execute(_CLAIMED, {"ids": ids})
    return [_checkout(row) for row in claimed.mappings()]


_OTHER = checkouts.alias("other")
# Reads payment_intents (the intents domain's table), as _DUE does: REQUIRES_ACTION intents with
# no ACTIVE checkout whose newest checkout closed before the cutoff (a second chance nobody took).
_STALE_OFFERS = (
    select(intents.c.id)
    .join(checkouts, checkouts.c.payment_intent_id == intents.c.id)
    .where(
        intents.c.status == "REQUIRES_ACTION",
        checkouts.c.closed_at <= bindparam("cutoff", type_=UtcDateTime),
        ~select(_OTHER.c.id)
        .where(
            _OTHER.c.payment_intent_id == intents.c.id,
            or_(_OTHER.c.status == CheckoutStatus.ACTIVE.value, _OTHER.c.closed_at > checkouts.c.closed_at),
        )
        .exists(),
    )
    .group_by(intents.c.id)
    .order_by(intents.c.id)
    .limit(bindparam("limit", type_=Integer))
)


async def stale_offer_intents(conn: AsyncConnection, *, closed_before: datetime, limit: int) -> list[str]:
    """Intents that may hold a second chance offered before ``closed_before`` (the caller checks
    each under the intent's lock: this read only narrows the search)."""
    rows = await conn.execute(_STALE_OFFERS, {"cutoff": closed_before, "limit": limit})
    return [str(row.id) for row in rows]
