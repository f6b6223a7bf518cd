"""HTTP of simulated provider C's hosted checkout page: what the buyer sees, the buyer's
button, the redirect back to the shop. The page carries no credentials: the session id (long
and random) is its key."""

from __future__ import annotations

from decimal import Decimal

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from payorch.http.deps import ReadConn, runtime_of
from payorch.money import exponent
from payorch.simulator import pages
from payorch.simulator import repository as shared
from payorch.simulator.outbox.sender import send_after_commit
from payorch.simulator.provider_c import events, repository, sessions
from payorch.simulator.provider_c.records import SimCSession
from payorch.simulator.provider_c.wire import PAGE_PATH

BRAND = "Provider C"
router = APIRouter(tags=["Simulator: provider C"], include_in_schema=False)

# What the page tells the buyer of a failed attempt (Stripe Checkout's words).
_SAYS = {
    "processing_error": "An error occurred while processing your card. Try again in a little bit.",
    "insufficient_funds": "Your card has insufficient funds. Try another card.",
}


def _page(request: Request, session: SimCSession, merchant: str, *, declined: str | None) -> HTMLResponse:
    now = runtime_of(request).clock.now()
    status = session.status_at(now)
    currency = session.currency.upper()
    total = Decimal(session.amount_total).scaleb(-(exponent(currency) or 0))
    ended = {
        "complete": "This checkout is complete. Nothing left to pay.",
        "expired": "This checkout has expired. Nothing was charged.",
    }.get(status, "")
    return pages.render(
        "provider_c/templates/provider_c.html",
        200 if status == "open" else 409,
        scripts=False,
        session=session,
        merchant=merchant,
        total=total,
        currency=currency,
        open=status == "open",
        ended=ended,
        declined=declined,
        cards=sessions.TEST_CARDS,
    )


@router.get(PAGE_PATH)
async def checkout_page(session_id: str, request: Request, conn: ReadConn) -> Response:
    session = await repository.session_of(conn, session_id, owner=None)
    if session is None:
        return pages.unknown_link("Unknown checkout", BRAND)
    merchant = await shared.merchant_name(conn, session.owner)
    return _page(request, session, merchant, declined=None)


@router.post(PAGE_PATH)
async def choose(session_id: str, request: Request) -> Response:
    """Two phases: the choice (and its events, outbox) commits, then they are sent."""
    runtime = runtime_of(request)
    form = await request.form()
    outcome, card = str(form.get("outcome", "")), str(form.get("card", sessions.DECLINED_CARD))
    if outcome not in sessions.OUTCOMES:
        return pages.no_outcome_chosen(BRAND)
    async with runtime.phases.transaction() as conn:
        changed = await sessions.choose(
            conn, runtime.clock, runtime.settings.public_url, session_id, outcome, card
        )
        merchant = await shared.merchant_name(conn, changed.session.owner) if changed else ""
    if changed is None:
        return pages.unknown_link("Unknown checkout", BRAND)
    session = changed.session
    await send_after_commit(runtime, events.NOTIFIER, changed.sent)
    if outcome == "cancel" and session.status_at(runtime.clock.now()) == "open" and session.cancel_url:
        return RedirectResponse(session.cancel_url, status_code=303)
    if changed.intent is None or session.status == "open":
        # Declined (try again here), or nothing more to choose on an ended session.
        code = changed.intent.decline_code if changed.intent is not None else None
        said = _SAYS.get(code or "", "Your card was declined. Try another card.") if code else None
        return _page(request, session, merchant, declined=said)
    return RedirectResponse(sessions.success_url(session), status_code=303)
