"""The SQL of holds (payments/holds.py): a capture or void in flight, and its settling. Every
change is a compare-and-set on a payment still REQUIRES_CAPTURE, built once at import."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import Integer, Update, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.db.tables.providers import payments

HELD = "REQUIRES_CAPTURE"
_HELD_PAYMENT = (payments.c.id == bindparam("payment_id"), payments.c.status == HELD)

_BEGIN = (
    update(payments)
    .where(*_HELD_PAYMENT)
    .values(
        hold_action=bindparam("action"),
        hold_action_amount=bindparam("action_amount"),
        hold_action_check_at=bindparam("check_at"),
    )
)


async def begin_action(
    conn: AsyncConnection, payment_id: str, action: str, amount: int | None, check_at: datetime
) -> bool:
    """Mark ``action`` (capture | void) as sent, to be read back at ``check_at`` if unsettled."""
    params = {"payment_id": payment_id, "action": action, "action_amount": amount, "check_at": check_at}
    return await _rowcount(conn, _BEGIN, params) == 1


_CLEAR = (
    update(payments)
    .where(*_HELD_PAYMENT)
    .values(hold_action=None, hold_action_amount=None, hold_action_check_at=None)
)


async def clear_action(conn: AsyncConnection, payment_id: str) -> None:
    """The action did not happen (refused, or the provider still holds): nothing in flight."""
    await _rowcount(conn, _CLEAR, {"payment_id": payment_id})


_CAPTURED = (
    update(payments)
    .where(*_HELD_PAYMENT)
    .values(
        status="AUTHORIZED",
        amount_captured=bindparam("captured"),
        amount_released=bindparam("released"),
        captured_at=bindparam("at"),
        hold_action=None,
        hold_action_amount=None,
        hold_action_check_at=None,
    )
)


async def set_captured(
    conn: AsyncConnection, payment_id: str, captured: int, released: int, at: datetime
) -> bool:
    params = {"payment_id": payment_id, "captured": captured, "released": released, "at": at}
    return await _rowcount(conn, _CAPTURED, params) == 1


_ENDED = (
    update(payments)
    .where(*_HELD_PAYMENT)
    .values(
        status=bindparam("new_status"),
        amount_released=payments.c.amount,
        hold_action=None,
        hold_action_amount=None,
        hold_action_check_at=None,
    )
)


async def set_ended(conn: AsyncConnection, payment_id: str, status: str) -> bool:
    """Released whole: VOIDED (on request) or EXPIRED (lapsed)."""
    return await _rowcount(conn, _ENDED, {"payment_id": payment_id, "new_status": status}) == 1


_DUE = (
    select(payments.c.id)
    .where(payments.c.hold_action.is_not(None), payments.c.hold_action_check_at <= bindparam("now"))
    .order_by(payments.c.hold_action_check_at)
    .limit(bindparam("batch", type_=Integer))
    .with_for_update(skip_locked=True)
)
_LEASE = (
    update(payments)
    .where(payments.c.id.in_(bindparam("ids", expanding=True)))
    .values(hold_action_check_at=bindparam("lease"))
)


async def claim_due(conn: AsyncConnection, now: datetime, lease_until: datetime, batch: int) -> list[str]:
    """Payments whose capture or void is unsettled past its time; leased for this worker."""
    ids = list((await conn.execute(_DUE, {"now": now, "batch": batch})).scalars())
    if ids:
        await conn.execute(_LEASE, {"ids": ids, "lease": lease_until})
    return ids


async def _rowcount(conn: AsyncConnection, statement: Update, params: Mapping[str, object]) -> int:
    result = await conn.execute(statement, params)
    return int(result.rowcount)
