"""All SQL of payment intents."""

from __future__ import annotations

from datetime import datetime

import orjson
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.one_statement import Fragment
from payorch.db.prepared import Prepared
from payorch.db.records import Row, field_names, record_of
from payorch.db.tables import payment_intents as intents
from payorch.db.tables.providers import checkouts, payments
from payorch.intents.records import IntentFilter, IntentPayment, PaymentIntent
from payorch.intents.states import IntentStatus
from payorch.jsontypes import JsonObject

# Built once: statements whose values come as parameters compile once and hit SQLAlchemy's cache
# without recomputing a cache key for every request (docs/performance-decisions.md, "Statements built once").
_INSERT = insert(intents)
_COLUMNS = tuple(intents.c.keys())  # the record's fields have the columns' names


async def insert_intent(conn: AsyncConnection, intent: PaymentIntent) -> None:
    await conn.execute(_INSERT, {name: getattr(intent, name) for name in _COLUMNS})


_SELECT_ONE = select(intents).where(
    intents.c.id == bindparam("intent_id"), intents.c.application_id == bindparam("application_id")
)
_GET = Prepared(_SELECT_ONE)
_GET_FOR_UPDATE = Prepared(_SELECT_ONE.with_for_update())  # a no-op on SQLite (BEGIN IMMEDIATE)


async def get(
    conn: AsyncConnection, application_id: str, intent_id: str, *, for_update: bool = False
) -> PaymentIntent | None:
    query = _GET_FOR_UPDATE if for_update else _GET
    parameters = {"intent_id": intent_id, "application_id": application_id}
    row = await query.first(conn, parameters)
    return _intent(row) if row is not None else None


# The intent with its payment (at most one: payments.payment_intent_id is unique), in one read:
# the one read of another domain's table here, because the join is the point (GET of an intent).
_GET_WITH_PAYMENT = Prepared(
    select(
        intents,
        payments.c.id.label("payment_id"),
        payments.c.status.label("payment_status"),
        payments.c.authorization_code.label("payment_authorization_code"),
        payments.c.authorized_at.label("payment_authorized_at"),
        payments.c.amount_captured.label("payment_amount_captured"),
        payments.c.capture_before.label("payment_capture_before"),
    )
    .outerjoin(payments, payments.c.payment_intent_id == intents.c.id)
    .where(
        intents.c.id == bindparam("intent_id"),
        intents.c.application_id == bindparam("application_id"),
    )
)


async def get_with_payment(
    conn: AsyncConnection, application_id: str, intent_id: str
) -> tuple[PaymentIntent, IntentPayment | None] | None:
    """The intent and its payment (None until a payment exists)."""
    parameters = {"intent_id": intent_id, "application_id": application_id}
    row = await _GET_WITH_PAYMENT.first(conn, parameters)
    if row is None:
        return None
    payment = None
    if row["payment_id"] is not None:
        payment = record_of(IntentPayment, row, renamed=_PAYMENT_COLUMNS)
    return _intent(row), payment


_PAYMENT_COLUMNS = {name: f"payment_{name}" for name in field_names(IntentPayment)}

# A PROCESSING intent's ACTIVE checkout: the checkouts' table read for what the intent waits for.
_WAITING_CHECKOUT = select(checkouts.c.provider, checkouts.c.created_at, checkouts.c.next_check_at).where(
    checkouts.c.payment_intent_id == bindparam("intent_id"), checkouts.c.status == "ACTIVE"
)


async def waiting_checkout(
    conn: AsyncConnection, intent_id: str
) -> tuple[str, datetime, datetime | None] | None:
    """(provider, created_at, next_check_at) of the intent's ACTIVE checkout, if any."""
    row = (await conn.execute(_WAITING_CHECKOUT, {"intent_id": intent_id})).first()
    return (row.provider, row.created_at, row.next_check_at) if row is not None else None


async def get_any(
    conn: AsyncConnection, intent_id: str, *, for_update: bool = False
) -> PaymentIntent | None:
    """By id alone: for provider returns and notifications, which carry no API key."""
    query = _GET_ANY_FOR_UPDATE if for_update else _GET_ANY
    row = await query.first(conn, {"intent_id": intent_id})
    return _intent(row) if row is not None else None


_SELECT_ANY = select(intents).where(intents.c.id == bindparam("intent_id"))
_GET_ANY = Prepared(_SELECT_ANY)
_GET_ANY_FOR_UPDATE = Prepared(_SELECT_ANY.with_for_update())


async def compare_and_set_status(
    conn: AsyncConnection,
    intent_id: str,
    *,
    expected: str,
    new: str,
    at: datetime,
    provider: str | None = None,
    routing: JsonObject | None = None,
    last_payment_error: JsonObject | None = None,
) -> bool:
    """Move the status if it still is ``expected``; ``provider``: also record the chosen one, and
    ``routing`` why (payorch.routing.record); ``last_payment_error``: why the payment did not go
    through (payorch.providers.payment_errors)."""
    parameters = {"intent_id": intent_id, "expected": expected, "new": new, "at": at}
    if last_payment_error is not None:
        values = {**parameters, "last_payment_error": last_payment_error}
        if routing is not None:  # an ending that also closes the routing record's attempt
            values["routing"] = routing
            return (await conn.execute(_MOVE_WITH_ERROR_AND_ROUTING, values)).rowcount == 1
        return (await conn.execute(_MOVE_WITH_ERROR, values)).rowcount == 1
    if provider is None:
        return await _MOVE.rowcount(conn, parameters) == 1
    values = {**parameters, "provider": provider, "routing": routing}
    return await _MOVE_WITH_PROVIDER.rowcount(conn, values) == 1


_UPDATE_STATUS = (
    update(intents)
    .where(intents.c.id == bindparam("intent_id"), intents.c.status == bindparam("expected"))
    .values(status=bindparam("new"), updated_at=bindparam("at"))
)
_MOVE = Prepared(_UPDATE_STATUS)
_MOVE_WITH_PROVIDER = Prepared(
    _UPDATE_STATUS.values(
        provider=bindparam("provider"), routing=bindparam("routing", type_=intents.c.routing.type)
    )
)
_MOVE_WITH_ERROR = _UPDATE_STATUS.values(
    last_payment_error=bindparam("last_payment_error", type_=intents.c.last_payment_error.type)
)
_MOVE_WITH_ERROR_AND_ROUTING = _MOVE_WITH_ERROR.values(
    routing=bindparam("routing", type_=intents.c.routing.type)
)
_STATUS_OF = select(intents.c.status).where(intents.c.id == bindparam("intent_id"))


async def status_of(conn: AsyncConnection, intent_id: str) -> str | None:
    return (await conn.execute(_STATUS_OF, {"intent_id": intent_id})).scalar_one_or_none()


async def page(
    conn: AsyncConnection,
    application_id: str,
    query: IntentFilter,
    *,
    lowest_id: str | None,
    below_id: str | None,
    limit: int,
) -> list[PaymentIntent]:
    """Newest first, keyset on the time-ordered id: ``id < below_id`` on an (application_id,
    [status | merchant_account_id | external_reference,] id) index, so a page costs the same
    however many intents precede it. Several statuses are one probe each, merged here: an
    ``IN`` would make the database read every matching row to order them."""
    found: list[PaymentIntent] = []
    statuses: list[IntentStatus | None] = [*query.statuses] if query.statuses else [None]
    for status in dict.fromkeys(statuses):
        select_page = select(intents).where(intents.c.application_id == application_id)
        if status is not None:
            select_page = select_page.where(intents.c.status == status.value)
        if query.merchant_account_id is not None:
            select_page = select_page.where(
                intents.c.merchant_account_id == query.merchant_account_id
            )
        if query.external_reference is not None:
            select_page = select_page.where(
                intents.c.external_reference == query.external_reference
            )
        if query.provider is not None:  # as shown: the chosen provider, else the requested one
            select_page = select_page.where(
                func.coalesce(intents.c.provider, intents.c.requested_provider) == query.provider
            )
        if lowest_id is not None:
            select_page = select_page.where(intents.c.id >= lowest_id)
        if below_id is not None:
            select_page = select_page.where(intents.c.id < below_id)
        select_page = select_page.order_by(intents.c.id.desc()).limit(limit)
        found += [_intent(row) for row in (await conn.execute(select_page)).mappings()]
    found.sort(key=lambda intent: intent.id, reverse=True)
    return found[:limit]


def _intent(row: Row) -> PaymentIntent:
    return record_of(PaymentIntent, row)  # rows may carry more columns (a join): left out


# PostgreSQL, one statement (payorch.db.one_statement): insert the intent when the gate before it
# (``admitted``) returned a row. Parameters: application_id and intent_* (intent_parameters).
INTENT_FRAGMENT = Fragment(
    "inserted_intent",
    "INSERT INTO payment_intents (id, application_id, merchant_account_id, status,"
    " external_reference, amount, currency, description, requested_provider, provider,"
    " return_url, metadata, created_at, updated_at, capture_method)"
    " SELECT CAST(:intent_id AS TEXT), CAST(:application_id AS TEXT),"
    " CAST(:intent_merchant_account_id AS TEXT), CAST(:intent_status AS TEXT),"
    " CAST(:intent_external_reference AS TEXT), CAST(:intent_amount AS BIGINT),"
    " CAST(:intent_currency AS TEXT), CAST(:intent_description AS TEXT),"
    " CAST(:intent_requested_provider AS TEXT), CAST(:intent_provider AS TEXT),"
    " CAST(:intent_return_url AS TEXT), CAST(:intent_metadata AS JSONB),"
    " CAST(:intent_created_at AS TIMESTAMPTZ), CAST(:intent_updated_at AS TIMESTAMPTZ),"
    " CAST(:intent_capture_method AS TEXT)"
    " WHERE EXISTS (SELECT 1 FROM admitted) RETURNING id",
)


def intent_parameters(intent: PaymentIntent) -> dict[str, object]:
    """The intent_* parameters of insert_intent_fragment (metadata as JSON text)."""
    # A new intent has no routing or payment error yet, and the API's none of a payment link:
    # the fragment leaves the columns NULL (a link's intents take the full path).
    values = {
        f"intent_{name}": getattr(intent, name)
        for name in _COLUMNS
        if name not in ("application_id", "routing", "last_payment_error", "payment_link_id")
    }
    values["intent_metadata"] = orjson.dumps(intent.metadata).decode()
    return values
