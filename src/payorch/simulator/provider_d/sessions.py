"""Simulated provider D's sessions and the payment authorised in one (docs/simulator.md); a
modification answers 201 ``received`` and says its outcome by notification. In the caller's transaction."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.providers.provider_d.decline_codes import REASONS, REFUSED
from payorch.simulator.lapses import Lapses, end_in
from payorch.simulator.outbox.records import Notification
from payorch.simulator.pages import with_query
from payorch.simulator.provider_d import notify, repository, wire
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import SimDError, amount, text

MAX_REFUSALS = 3  # refused attempts before the session is refused (❓ in the protocol)
HOLD_DAYS = 7  # an authorisation held this long, then EXPIRE (❓: "depends on the card scheme")
OUTCOMES = ("approve", "reject", "cancel")


@dataclass(frozen=True, slots=True)
class Decided:
    session: SimDSession
    sent: list[Notification]
    back: str | None  # where the buyer goes: returnUrl + sessionId + sessionResult


def _expiry(body: JsonObject, now: datetime) -> datetime:
    given = body.get("expiresAt")
    if given is None:
        return now + timedelta(hours=1)
    try:
        at = datetime.fromisoformat(str(given))
    except ValueError:
        raise SimDError(422, "100", "Field 'expiresAt' is not a valid date-time.") from None
    if at.tzinfo is None or not now < at <= now + timedelta(hours=24):
        raise SimDError(422, "100", "Field 'expiresAt' must be within 24 hours of now, with an offset.")
    return at


def _merchant(body: JsonObject, merchant: str) -> None:
    if text(body, "merchantAccount") != merchant:
        raise SimDError(403, "901", "Invalid Merchant Account", "security")


async def create(
    conn: AsyncConnection, clock: Clock, owner: str, merchant: str, body: JsonObject
) -> SimDSession:
    _merchant(body, merchant)
    value, currency = amount(body)
    text(body, "reference", "130")
    return_url = text(body, "returnUrl", "14_030")
    if not return_url.startswith(("http://", "https://")):
        raise SimDError(422, "14_030", "Return URL is missing.")
    extra, meta = body.get("additionalData"), body.get("metadata")
    manual = isinstance(extra, dict) and extra.get("manualCapture") == "true"
    meta = meta if isinstance(meta, dict) else {}
    url, intent = meta.get("payorch_notification_url"), meta.get("payment_intent_id") or body["reference"]
    now = clock.now()
    session = SimDSession(
        id=wire.new_session_id(), owner=owner, intent=str(intent), amount=value, currency=currency,
        manual_capture=manual, notification_url=url if isinstance(url, str) else None, request=body,
        expires_at=_expiry(body, now), created_at=now,
    )
    await repository.insert(conn, session)
    return session


def created_body(session: SimDSession, public_url: str) -> JsonObject:
    """The request echoed, with what the provider adds (§3.2)."""
    return {
        **session.request,
        "id": session.id,
        "mode": session.request.get("mode", "embedded"),
        "expiresAt": session.expires_at.isoformat(timespec="seconds"),
        "sessionData": "Ab02b4c0!" + session.id,
        "url": public_url + wire.PAGE_PATH.format(session_id=session.id),
    }


def result_body(session: SimDSession, presented: str | None, now: datetime) -> JsonObject:
    """``SessionResultResponse``: only for the sessionResult the hosted page gave the buyer."""
    if not presented:
        raise SimDError(422, "100", "Required query parameter 'sessionResult' is not provided")
    if presented != session.session_result:
        raise SimDError(500, "701", "Invalid sessionResult", "internal")
    payments = [] if session.psp is None else [{
        "amount": {"currency": session.currency, "value": session.amount},
        "paymentMethod": {"brand": "visa", "type": "scheme"},
        "pspReference": session.psp,
        "resultCode": "Authorised",
    }]
    status, reference = session.status_at(now), session.reference
    return {"id": session.id, "status": status, "reference": reference, "payments": payments,
            "additionalData": {}}


async def decide(
    conn: AsyncConnection, clock: Clock, public_url: str, session_id: str, outcome: str, refusal: str = ""
) -> Decided | None:
    """The buyer's button (None: no such session); an ended session changes nothing, sends nowhere."""
    session = await repository.session_of(conn, session_id, owner=None, for_update=True)
    if session is None:
        return None
    now = clock.now()
    if session.status_at(now) != "active":
        return Decided(session, [], None)
    token, psp, value = session.session_result or wire.new_session_result(), wire.new_psp(), session.amount
    made = []
    if outcome == "approve":
        session = replace(session, status="completed", psp=psp, session_result=token)
        if session.manual_capture:
            ends = now + timedelta(days=HOLD_DAYS)
            session = replace(session, payment="authorised", held=value, hold_ends_at=ends)
        else:
            session = replace(session, payment="captured", captured=value)
        card = {"authCode": "087330", "cardSummary": "1111", "expiryDate": "03/2030"}
        said = ":".join(card.values())
        made.append(notify.item(session, "AUTHORISATION", psp, value, success=True, now=now, reason=said,
                                extra=card))
        if not session.manual_capture:
            capture = wire.new_psp()
            made.append(notify.item(session, "CAPTURE", capture, value, success=True, now=now, original=psp))
    elif outcome == "reject":
        refusal = refusal if refusal in REASONS else REFUSED
        said, refusals = REASONS[refusal][0], session.refusals + 1
        status = "refused" if refusals >= MAX_REFUSALS else "active"
        session = replace(session, status=status, refusals=refusals, session_result=token)
        raw = {"refusalReasonCode": refusal, "refusalReasonRaw": said}
        made.append(notify.item(session, "AUTHORISATION", psp, value, success=False, now=now, reason=said,
                                extra=raw))
    else:
        session = replace(session, status="canceled", session_result=token)
    await repository.save(conn, session)
    sent = [n for m in made for n in await notify.enqueue(conn, public_url, session, m, now)]
    back = with_query(str(session.request["returnUrl"]), {"sessionId": session.id, "sessionResult": token})
    return Decided(session, sent, back)


EVENTS = dict(captures="CAPTURE", cancels="CANCELLATION", refunds="REFUND", reversals="CANCEL_OR_REFUND")
_WITH_AMOUNT = ("captures", "refunds")


def _applied(session: SimDSession, kind: str, value: int, currency: str) -> tuple[SimDSession | None, str]:
    """The payment after the modification, or None with why it was refused."""
    if currency != session.currency:
        return None, "Currency of the modification does not match the payment"
    if kind in ("captures", "cancels") and session.payment != "authorised":
        return None, f"Payment is {session.payment}, {kind[:-1]} not possible"
    if kind == "captures":
        if value > session.held:
            return None, "Capture amount exceeds the authorised amount"
        return replace(session, payment="captured", held=0, captured=value), ""  # the rest released
    if kind == "cancels":
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
) -> tuple[JsonObject, list[Notification]]:
    """The 201 answer, and the notification of its outcome (after an EXPIRE, if it lapsed)."""
    _merchant(body, merchant)
    reference = body.get("reference")
    if reference is not None and (not isinstance(reference, str) or len(reference) > 80):
        raise SimDError(422, "100", "Field 'reference' must be a string of at most 80 characters.")
    session = await repository.paid_by(conn, psp, owner)
    if session is None:
        raise SimDError(422, "167", "Original pspReference required for this operation")
    now, sent = clock.now(), []
    if session.payment == "authorised" and session.hold_ends_at is not None and now >= session.hold_ends_at:
        sent += await _lapse(conn, public_url, session, now)
        session = _lapsed(session)
    value, currency = amount(body) if kind in _WITH_AMOUNT else (session.amount, session.currency)
    if kind == "reversals" and session.payment == "captured":
        value = session.captured - session.refunded
    changed, why = _applied(session, kind, value, currency)
    own, ok = wire.new_psp(), changed is not None
    if changed is not None:
        await repository.save(conn, changed)
    extra = {"modification.action": why} if kind == "reversals" and ok else {}
    made = notify.item(session, EVENTS[kind], own, value, success=ok, now=now, original=psp,
                       reason="" if ok else why, extra=extra)
    sent += await notify.enqueue(conn, public_url, session, made, now)
    answer: JsonObject = {"merchantAccount": merchant, "paymentPspReference": psp, "pspReference": own}
    answer["status"] = "received"
    if kind in _WITH_AMOUNT:
        answer["amount"] = {"value": value, "currency": currency}
    if isinstance(reference, str):
        answer["reference"] = reference
    return answer, sent


def _lapsed(session: SimDSession) -> SimDSession:
    return replace(session, payment="expired", held=0)


async def _lapse(
    conn: AsyncConnection, public_url: str, session: SimDSession, now: datetime
) -> list[Notification]:
    """The held authorisation expired: released, and EXPIRE sent."""
    await repository.save(conn, _lapsed(session))
    made = notify.item(session, "EXPIRE", session.psp or "", session.held, success=True, now=now)
    return await notify.enqueue(conn, public_url, session, made, now)


LAPSES = Lapses(
    notify.NOTIFIER, repository.holds_ending, *end_in("hold_ends_at", repository.save), _lapse,
    reference=lambda session: session.psp or session.id,
)
