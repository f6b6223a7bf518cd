"""Simulated provider D's hosted page (a session's ``url``, no credentials: the session id is its
key): the buyer's button, then the GET back to ``returnUrl`` with ``sessionId`` and
``sessionResult``, after a refusal too (the session stays payable until refused)."""

from __future__ import annotations

from decimal import Decimal

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from payorch.http.deps import ReadConn, runtime_of
from payorch.money import exponent
from payorch.providers.provider_d.decline_codes import REASONS, REFUSED
from payorch.simulator import pages
from payorch.simulator import repository as shared
from payorch.simulator.outbox.sender import send_after_commit
from payorch.simulator.provider_d import notify, repository, sessions
from payorch.simulator.provider_d.repository import SimDSession
from payorch.simulator.provider_d.wire import PAGE_PATH

BRAND = "Provider D"
router = APIRouter(tags=["Simulator: provider D"], include_in_schema=False)
_ENDED = {
    "completed": "This payment is complete. Nothing left to pay.",
    "refused": "Too many refused attempts: this payment session is closed.",
    "canceled": "This payment was cancelled. Nothing was charged.",
    "expired": "This payment session has expired. Nothing was charged.",
}


def _page(request: Request, session: SimDSession, merchant: str) -> Response:
    status = session.status_at(runtime_of(request).clock.now())
    total = Decimal(session.amount).scaleb(-(exponent(session.currency) or 0))
    return pages.render(
        "provider_d/page.html",
        200 if status == "active" else 409,
        session=session,
        merchant=merchant,
        total=total,
        ended=_ENDED.get(status, ""),
        reasons={code: words for code, (words, _) in REASONS.items()},
        refused=REFUSED,
        attempts_left=sessions.MAX_REFUSALS - session.refusals,
    )


@router.get(PAGE_PATH)
async def hosted_page(session_id: str, request: Request, conn: ReadConn) -> Response:
    session = await repository.session_of(conn, session_id, owner=None)
    if session is None:
        return pages.unknown_link("Unknown payment", BRAND)
    return _page(request, session, await shared.merchant_name(conn, session.owner) or "Sandbox shop")


@router.post(PAGE_PATH)
async def choose(session_id: str, request: Request) -> Response:
    """Two phases: the choice (and its notifications, outbox) commits, then they are sent."""
    runtime, form = runtime_of(request), await request.form()
    chosen = str(form.get("outcome", ""))
    if chosen not in sessions.OUTCOMES:
        return pages.no_outcome_chosen(BRAND)
    refusal, public_url = str(form.get("reason", REFUSED)), runtime.settings.public_url
    async with runtime.phases.transaction() as conn:
        decided = await sessions.decide(conn, runtime.clock, public_url, session_id, chosen, refusal)
        shop = await shared.merchant_name(conn, decided.session.owner) if decided else None
    if decided is None:
        return pages.unknown_link("Unknown payment", BRAND)
    await send_after_commit(runtime, notify.NOTIFIER, decided.sent)
    if decided.back is None:  # an ended session sends the buyer nowhere: its page again, saying so
        return _page(request, decided.session, shop or "Sandbox shop")
    return RedirectResponse(decided.back, 303)  # See Other: the browser GETs the return after this POST
