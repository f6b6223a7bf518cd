"""Simulated provider D's modifications (``POST /payments/{psp}/captures|cancels|refunds|reversals``):
201 ``received``, the outcome a notification (``success: "false"`` with a reason when refused). A
hold not captured within its window lapses (EXPIRE). In the caller's transaction."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_d import notify, repository
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import SimDError, amount, new_psp, text

EVENTS = dict(captures="CAPTURE", cancels="CANCELLATION", refunds="REFUND", reversals="CANCEL_OR_REFUND")
_WITH_AMOUNT = ("captures", "refunds")


@dataclass(frozen=True, slots=True)
class Modified:
    body: JsonObject  # the 201 answer
    sent: list[Notification]


def _applied(session: SimDSession, kind: str, value: int, currency: str) -> tuple[SimDSession | None, str]:
    """The payment after the modification, or None with why it was refused."""
    if currency != session.currency:
        return None, "Currency of the modification does not match the payment"
    if kind == "captures":
        if session.payment != "authorised":
            return None, f"Payment is {session.payment}, capture not possible"
        if value > session.held:
            return None, "Capture amount exceeds the authorised amount"
        return replace(session, payment="captured", held=0, captured=value), ""  # the rest released
    if kind == "cancels":
        if session.payment != "authorised":
            return None, f"Payment is {session.payment}, cancel not possible"
        return replace(session, payment="cancelled", held=0), ""
    if kind == "refunds":
        if session.payment != "captured":
            return None, "Transaction hasn't been captured, refund not possible"
        if session.refunded + value > session.captured:
            return None, "Refund amount exceeds the captured amount not yet refunded"
        return replace(session, refunded=session.refunded + value), ""
    if session.payment == "authorised":
        return replace(session, payment="cancelled", held=0), "cancel"
    if session.payment == "captured" and session.refunded < session.captured:
        return replace(session, refunded=session.captured), "refund"
    return None, f"Payment is {session.payment}, nothing to reverse"


async def modify(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, merchant: str, psp: str, kind: str,
    body: JsonObject,
) -> Modified:
    if text(body, "merchantAccount") != merchant:
        raise SimDError(403, "901", "Invalid Merchant Account", "security")
    reference = body.get("reference")
    if reference is not None and (not isinstance(reference, str) or len(reference) > 80):
        raise SimDError(422, "100", "Field 'reference' must be a string of at most 80 characters.")
    session = await repository.paid_by(conn, psp, owner)
    if session is None:
        raise SimDError(422, "167", "Original pspReference required for this operation")
    now, sent = clock.now(), []
    if session.payment == "authorised" and session.hold_ends_at is not None and now >= session.hold_ends_at:
        session, expired = await lapse(conn, public_url, session, now)
        sent += expired
    value, currency = amount(body) if kind in _WITH_AMOUNT else (session.amount, session.currency)
    if kind == "reversals" and session.payment == "captured":
        value = session.captured - session.refunded
    changed, why = _applied(session, kind, value, currency)
    extra = {"modification.action": why} if kind == "reversals" and changed is not None else {}
    own = new_psp()
    if changed is not None:
        await repository.save(conn, changed)
    reason = "" if changed is not None else why
    ok = changed is not None
    made = notify.item(session, EVENTS[kind], own, value, success=ok, now=now, original=psp, reason=reason,
                       extra=extra)
    written = await notify.enqueue(conn, public_url, session, made, now)
    answer: JsonObject = {"merchantAccount": merchant, "paymentPspReference": psp, "pspReference": own}
    answer["status"] = "received"
    if kind in _WITH_AMOUNT:
        answer["amount"] = {"value": value, "currency": currency}
    if isinstance(reference, str):
        answer["reference"] = reference
    return Modified(answer, sent + ([written] if written else []))


async def lapse(
    conn: AsyncConnection, public_url: str, session: SimDSession, now: datetime
) -> tuple[SimDSession, list[Notification]]:
    """The held authorisation expired: released, and EXPIRE sent."""
    assert session.psp is not None
    lapsed = replace(session, payment="expired", held=0)
    await repository.save(conn, lapsed)
    made = notify.item(session, "EXPIRE", session.psp, session.held, success=True, now=now)
    written = await notify.enqueue(conn, public_url, session, made, now)
    return lapsed, [written] if written else []


async def advance(
    conn: AsyncConnection, clock: Clock, public_url: str, owner: str, seconds: int
) -> list[tuple[SimDSession, list[Notification]]]:
    """The clock control: ``owner``'s holds ``seconds`` nearer their end; those past it lapse."""
    now = clock.now()
    moved = []
    for held in await repository.holds_ending(conn, now + timedelta(days=365), 1000, owner):
        assert held.hold_ends_at is not None
        nearer = replace(held, hold_ends_at=held.hold_ends_at - timedelta(seconds=seconds))
        await repository.save(conn, nearer)
        if nearer.hold_ends_at is not None and now >= nearer.hold_ends_at:
            moved.append(await lapse(conn, public_url, nearer, now))
    return moved
