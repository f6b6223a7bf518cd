"""HTTP of simulated provider B's checkout page: what the buyer sees, the buyer's button, the
redirect back to the shop. The page carries no credentials: the preference id is its key."""

from __future__ import annotations

from decimal import Decimal

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from payorch.http.deps import ReadConn, runtime_of
from payorch.simulator import repository as shared
from payorch.simulator.outbox.sender import send_after_commit
from payorch.simulator.pages import no_outcome_chosen, render, unknown_link, with_query
from payorch.simulator.provider_b import checkout, notify
from payorch.simulator.provider_b.records import SimBPayment, SimBPreference
from payorch.simulator.provider_b.wire import PAGE_PATH

BRAND = "Provider B"

router = APIRouter(tags=["Simulator: provider B"], include_in_schema=False)


def _unknown() -> Response:
    return unknown_link("Unknown checkout", BRAND)


@router.get(PAGE_PATH)
async def checkout_page(request: Request, conn: ReadConn) -> Response:
    runtime = runtime_of(request)
    state = await checkout.page_state(conn, request.query_params.get("pref_id", ""))
    if state is None:
        return _unknown()
    preference = state.preference
    merchant = await shared.merchant_name(conn, preference.owner)
    if state.settled is not None:
        return _settled_page(preference, state.settled)
    return render(
        "provider_b/page.html",
        merchant=merchant,
        preference=preference,
        items=preference.body.get("items", []),
        total=Decimal(preference.amount_hundredths) / 100,
        currency=preference.currency_id,
        expired=preference.is_expired(runtime.clock.now()),
        rejected=any(p.status == "rejected" for p in state.payments),
        cardholder_names=checkout.CARDHOLDER_NAMES,
    )


@router.post(PAGE_PATH)
async def choose(request: Request) -> Response:
    """Two phases: the choice (and its notification, outbox) commits, then it is sent."""
    runtime = runtime_of(request)
    phases = runtime.phases
    form = await request.form()
    outcome = str(form.get("outcome", ""))
    if outcome not in checkout.OUTCOMES:
        return no_outcome_chosen(BRAND)
    async with phases.transaction() as conn:
        choice = await checkout.choose(
            conn,
            runtime.clock,
            runtime.settings.public_url,
            str(form.get("pref_id", "")),
            outcome,
            str(form.get("cardholder_name", "OTHE")),
        )
    if choice is None:
        return _unknown()
    preference = choice.state.preference
    if choice.outcome == "settled" and choice.payment is not None:
        return _settled_page(preference, choice.payment)
    await send_after_commit(runtime, notify.NOTIFIER, choice.notifications)
    url = checkout.back_url(preference, choice.payment)
    if url is None:
        return render(
            "message.html",
            200,
            title="Payment finished",
            brand=BRAND,
            message="The shop gave no address to return to. You can close this window.",
        )
    target = with_query(url, checkout.back_params(preference, choice.payment))
    return RedirectResponse(target, status_code=303)


def _settled_page(preference: SimBPreference, payment: SimBPayment) -> Response:
    url = checkout.back_url(preference, payment)
    back = None
    if url is not None:
        back = {"url": url, "method": "GET", "fields": checkout.back_params(preference, payment)}
    return render(
        "message.html",
        409,
        title="This checkout is already paid",
        brand=BRAND,
        message=f"Payment {payment.id} is {payment.status.replace('_', ' ')}. Nothing left to pay.",
        back=back,
    )
