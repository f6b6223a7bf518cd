"""Simulated provider D's Hosted Checkout sessions: made by ``POST /sessions``, decided on the
hosted page, read back with their ``sessionResult``. A refused attempt leaves the session active
until ``MAX_REFUSALS``; an approved one holds (manualCapture) or captures at once (CAPTURE
follows). In the caller's transaction."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.providers.provider_d.decline_codes import REASONS, REFUSED
from payorch.simulator.outbox.records import Notification
from payorch.simulator.pages import with_query
from payorch.simulator.provider_d import notify, repository
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import (
    PAGE_PATH,
    SimDError,
    amount,
    new_psp,
    new_session_id,
    new_session_result,
    text,
)

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


async def create(
    conn: AsyncConnection, clock: Clock, owner: str, merchant: str, body: JsonObject
) -> SimDSession:
    if text(body, "merchantAccount") != merchant:
        raise SimDError(403, "901", "Invalid Merchant Account", "security")
    value, currency = amount(body)
    text(body, "reference", "130")
    return_url = text(body, "returnUrl", "14_030")
    if not return_url.startswith(("http://", "https://")):
        raise SimDError(422, "14_030", "Return URL is missing.")
    extra, meta = body.get("additionalData"), body.get("metadata")
    extra = extra if isinstance(extra, dict) else {}
    meta = meta if isinstance(meta, dict) else {}
    now = clock.now()
    url, intent = meta.get("payorch_notification_url"), meta.get("payment_intent_id")
    session = SimDSession(
        id=new_session_id(), owner=owner, intent=str(intent or body["reference"]), status="active",
        refusals=0, amount=value, currency=currency, manual_capture=extra.get("manualCapture") == "true",
        notification_url=url if isinstance(url, str) else None, request=body, session_result=None, psp=None,
        payment=None, held=0, captured=0, refunded=0, hold_ends_at=None, expires_at=_expiry(body, now),
        created_at=now,
    )
    await repository.insert_session(conn, session)
    return session


def created_body(session: SimDSession, public_url: str) -> JsonObject:
    """The request echoed, with what the provider adds (§3.2)."""
    return {
        **session.request,
        "id": session.id,
        "mode": session.request.get("mode", "embedded"),
        "expiresAt": session.expires_at.isoformat(timespec="seconds"),
        "sessionData": "Ab02b4c0!" + session.id,
        "url": public_url + PAGE_PATH.format(session_id=session.id),
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
    """The buyer's button on the hosted page (None: no such session). An ended session changes
    nothing and sends the buyer nowhere."""
    session = await repository.session_of(conn, session_id, owner=None, for_update=True)
    if session is None:
        return None
    now = clock.now()
    if session.status_at(now) != "active":
        return Decided(session, [], None)
    token, psp, value = session.session_result or new_session_result(), new_psp(), session.amount
    made = []
    if outcome == "approve":
        session = _authorised(replace(session, status="completed", psp=psp, session_result=token), now)
        card = {"authCode": "087330", "cardSummary": "1111", "expiryDate": "03/2030"}
        said = ":".join(card.values())
        made.append(notify.item(session, "AUTHORISATION", psp, value, success=True, now=now, reason=said,
                                extra=card))
        if not session.manual_capture:
            capture = new_psp()
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
    sent = [n for m in made if (n := await notify.enqueue(conn, public_url, session, m, now)) is not None]
    back = with_query(str(session.request["returnUrl"]), {"sessionId": session.id, "sessionResult": token})
    return Decided(session, sent, back)


def _authorised(session: SimDSession, now: datetime) -> SimDSession:
    if session.manual_capture:
        return replace(
            session, payment="authorised", held=session.amount, hold_ends_at=now + timedelta(days=HOLD_DAYS)
        )
    return replace(session, payment="captured", captured=session.amount)
