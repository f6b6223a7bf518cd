"""All SQL of provider A's simulated transactions (always scoped by owner).

Statements are built once, with bind parameters for the values (docs/performance-decisions.md,
"Statements built once"); an update's own parameters take a b_ prefix, as its table's column
names are the SET clause's."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, Row, bindparam, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.prepared import Prepared
from payorch.db.tables.simulator import simulator_a_transactions as transactions
from payorch.simulator.provider_a.records import SimADecision, SimATransaction
from payorch.simulator.provider_a.wire import SimACreateRequest
from payorch.simulator.repository import owned


def _transaction(row: Row[tuple[object, ...]]) -> SimATransaction:
    return SimATransaction(**row._mapping)


_NEW_COLUMNS = (
    "token", "owner", "buy_order", "session_id", "amount", "return_url", "created_at", "status",
    "nullified_amount", "deferred",
)  # fmt: skip
_INSERT = Prepared(insert(transactions).values({name: bindparam(name) for name in _NEW_COLUMNS}))


async def insert_transaction(
    conn: AsyncConnection,
    token: str,
    owner: str,
    request: SimACreateRequest,
    now: datetime,
    *,
    deferred: bool = False,
) -> None:
    await _INSERT.execute(
        conn,
        {
            "token": token,
            "owner": owner,
            "buy_order": request.buy_order,
            "session_id": request.session_id,
            "amount": request.amount,
            "return_url": request.return_url,
            "created_at": now,
            "status": "INITIALIZED",
            "nullified_amount": 0,
            "deferred": deferred,
        },
    )


async def get(
    conn: AsyncConnection, token: str, *, owner: str | None = None, for_update: bool = False
) -> SimATransaction | None:
    """By token; ``owner`` None only for the buyer's page, which carries no credentials."""
    return await owned(
        conn, SimATransaction, transactions, "token", token, owner=owner, for_update=for_update
    )


_DECIDE = Prepared(
    update(transactions)
    .where(transactions.c.token == bindparam("b_token"), transactions.c.outcome.is_(None))
    .values(
        outcome=bindparam("b_outcome"),
        status=bindparam("b_status"),
        response_code=bindparam("b_response_code"),
        authorization_code=bindparam("b_authorization_code"),
        card_number=bindparam("b_card_number"),
        payment_type_code=bindparam("b_payment_type_code"),
        decided_at=bindparam("b_decided_at"),
        capture_before=bindparam("b_capture_before"),
    )
)


async def decide(
    conn: AsyncConnection,
    token: str,
    decision: SimADecision,
    decided_at: datetime,
    capture_before: datetime | None = None,
) -> bool:
    """Record the buyer's choice once (``capture_before``: a deferred approval's hold's end):
    False if the page was already answered."""
    changed = await _DECIDE.rowcount(
        conn,
        {
            "b_token": token,
            "b_outcome": decision.outcome,
            "b_status": decision.status,
            "b_response_code": decision.response_code,
            "b_authorization_code": decision.authorization_code,
            "b_card_number": decision.card_number,
            "b_payment_type_code": decision.payment_type_code,
            "b_decided_at": decided_at,
            "b_capture_before": capture_before,
        },
    )
    return changed == 1


_MARK_COMMITTED = Prepared(
    update(transactions)
    .where(transactions.c.token == bindparam("b_token"), transactions.c.committed_at.is_(None))
    .values(committed_at=bindparam("b_committed_at"))
)


async def mark_committed(conn: AsyncConnection, token: str, committed_at: datetime) -> bool:
    """Compare-and-set: exactly one commit per token, whatever races."""
    return await _MARK_COMMITTED.rowcount(conn, {"b_token": token, "b_committed_at": committed_at}) == 1


_APPLY_REFUND = (
    update(transactions)
    .where(
        transactions.c.token == bindparam("b_token"),
        transactions.c.nullified_amount == bindparam("b_before"),
    )
    .values(nullified_amount=bindparam("b_after"), status=bindparam("b_status"))
)


async def apply_refund(conn: AsyncConnection, token: str, before: int, after: int, status: str) -> bool:
    result = await conn.execute(
        _APPLY_REFUND, {"b_token": token, "b_before": before, "b_after": after, "b_status": status}
    )
    return result.rowcount == 1


_CAPTURE = (
    update(transactions)
    .where(transactions.c.token == bindparam("b_token"), transactions.c.captured_at.is_(None))
    .values(
        status="CAPTURED",
        captured_amount=bindparam("b_captured_amount"),
        captured_at=bindparam("b_captured_at"),
    )
)


async def capture(conn: AsyncConnection, token: str, amount: int, at: datetime) -> bool:
    """Compare-and-set: exactly one capture per token, whatever races."""
    result = await conn.execute(
        _CAPTURE, {"b_token": token, "b_captured_amount": amount, "b_captured_at": at}
    )
    return result.rowcount == 1


_HOLDS_OF = (
    select(transactions)
    .where(
        transactions.c.owner == bindparam("owner"),
        transactions.c.status == "AUTHORIZED",
        transactions.c.capture_before.is_not(None),
        transactions.c.captured_at.is_(None),
    )
    .order_by(transactions.c.token)
    .with_for_update()
)


async def holds_of(conn: AsyncConnection, owner: str) -> list[SimATransaction]:
    """``owner``'s deferred authorizations not captured (lapsed ones too), locked."""
    return [_transaction(row) for row in await conn.execute(_HOLDS_OF, {"owner": owner})]


_MOVE_HOLD = (
    update(transactions)
    .where(transactions.c.token == bindparam("b_token"))
    .values(capture_before=bindparam("b_capture_before"))
)


async def move_hold(conn: AsyncConnection, token: str, capture_before: datetime) -> None:
    await conn.execute(_MOVE_HOLD, {"b_token": token, "b_capture_before": capture_before})


_DECLINES_OF_ORDER = Prepared(
    select(func.count().label("declines")).where(
        transactions.c.owner == bindparam("owner"),
        transactions.c.buy_order == bindparam("buy_order"),
        transactions.c.outcome == "reject",
        transactions.c.decided_at >= bindparam("since"),
    )
)


async def declines_of_order(conn: AsyncConnection, owner: str, buy_order: str, *, since: datetime) -> int:
    """How many of ``owner``'s transactions for ``buy_order`` were declined since ``since``."""
    params = {"owner": owner, "buy_order": buy_order, "since": since}
    row = await _DECLINES_OF_ORDER.first(conn, params)
    assert row is not None  # a count answers one row
    declines = row["declines"]
    assert isinstance(declines, int)
    return declines


_OPEN_FOR_INTENT = (
    select(transactions)
    .where(
        transactions.c.owner == bindparam("owner"),
        transactions.c.return_url.like(bindparam("return_url")),
    )
    .order_by(transactions.c.created_at.desc())
)


async def open_for_intent(conn: AsyncConnection, owner: str, payment_intent_id: str) -> list[SimATransaction]:
    """Transactions whose return address is that intent's return handler (docs/simulator.md, "Controls")."""
    rows = await conn.execute(_OPEN_FOR_INTENT, {"owner": owner, "return_url": f"%/{payment_intent_id}"})
    return [_transaction(row) for row in rows]


_DELETE_OLDER_THAN = delete(transactions).where(
    transactions.c.token.in_(
        select(transactions.c.token)
        .where(
            transactions.c.owner == bindparam("owner"),
            transactions.c.created_at < bindparam("before"),
        )
        .limit(bindparam("limit", type_=Integer))
    )
)


async def delete_older_than(conn: AsyncConnection, owner: str, before: datetime, limit: int) -> int:
    """Delete up to ``limit`` of ``owner``'s transactions created before ``before``."""
    result = await conn.execute(_DELETE_OLDER_THAN, {"owner": owner, "before": before, "limit": limit})
    return result.rowcount
