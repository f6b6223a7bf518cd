"""The intent page's hold forms (capture_method manual; docs/dashboard.md, "Holds"): capture all
or part of a held payment, the amount typed under the one amount rule (payorch.amount_text), and
void it. Each is confirmed on a page of its own first, which shows the amount in the currency's
format and carries it, so nothing else can move. The one service (payorch.payments.holds) does
the rest as for the API: its checks, its activity entry, the provider's call. Only roles with
captures:write see the forms or may post them (payorch.access.pages)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from payorch.amount_text import UnreadableAmount, read_amount
from payorch.dashboard.intent import RefundRefused, show_intent
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import CaptureAmountExceeded, IdempotencyKeyInUse, InvalidState, ProviderError
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.payment_text import over_capture
from payorch.payments import holds
from payorch.payments import service as payments
from payorch.payments.records import Payment

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

HELD = "REQUIRES_CAPTURE"


async def _held(viewer: Viewer, intent_id: str) -> tuple[PaymentIntent, Payment | None]:
    """The intent (404 page if not the viewer's) and its payment if it is still held."""
    async with viewer.runtime.phases.reading() as conn:
        detail = await intents.read_intent(conn, viewer.caller, intent_id)
        paid = await payments.read_payment(conn, viewer.caller, detail.payment.id) if detail.payment else None
    return detail.intent, paid if paid is not None and paid.status == HELD else None


async def _refused(request: Request, viewer: Viewer, intent_id: str, typed: str, message: str) -> Response:
    """The intent page, 400, with the capture form as sent and ``message`` beside its amount."""
    async with viewer.runtime.phases.reading() as conn:
        sent = RefundRefused(typed, "", message, form="capture")
        return await show_intent(request, viewer, conn, intent_id, sent)


def _failed(error: ProviderError) -> str:
    """The notice of a provider's failure: a refusal (still held) or an unknown answer."""
    return "hold-unknown" if error.details.get("outcome") == "unknown" else "hold-refused"


@router.post("/payments/{intent_id}/capture")
async def capture(intent_id: str, request: Request, viewer: ViewerDep, form: FormDep) -> Response:
    intent, held = await _held(viewer, intent_id)
    page = f"/payments/{intent_id}?notice="
    if held is None:  # captured, voided or lapsed since the page was shown: it says which
        return back_to(request, page + "not-held")
    text = field(form, "amount")
    try:
        amount = read_amount(text, held.currency) if text else held.amount_capturable
    except UnreadableAmount as unreadable:
        return await _refused(request, viewer, intent_id, text, str(unreadable))
    if amount > held.amount_capturable:  # refused before any confirmation
        return await _refused(request, viewer, intent_id, text, over_capture(amount, held))
    if field(form, "confirmed") != str(amount):
        return render(
            request,
            "hold_confirm.html",
            viewer,
            title="Confirm the capture",
            action="capture",
            intent=intent,
            payment=held,
            moving=amount,
            released=held.amount_capturable - amount,
            typed=text,
            hold_key=field(form, "hold_key"),
        )
    runtime = viewer.runtime
    scope = runtime.idempotency.scope(
        viewer.caller.application_id, "POST", request.url.path, field(form, "hold_key"), {"amount": amount}
    )
    try:
        await holds.capture_payment(runtime.phases, runtime, viewer.caller, held.id, amount, scope)
    except IdempotencyKeyInUse:  # the first of a double submit is still running
        return back_to(request, page + "hold-in-progress")
    except InvalidState:  # settled meanwhile, or a capture or void in flight
        return back_to(request, page + "not-held")
    except CaptureAmountExceeded as exceeded:  # what the provider allows (the whole hold only)
        return await _refused(request, viewer, intent_id, text, exceeded.message)
    except ProviderError as failed:
        return back_to(request, page + _failed(failed))
    return back_to(request, page + "captured")


@router.post("/payments/{intent_id}/void")
async def void(intent_id: str, request: Request, viewer: ViewerDep, form: FormDep) -> Response:
    intent, held = await _held(viewer, intent_id)
    page = f"/payments/{intent_id}?notice="
    if held is None:
        return back_to(request, page + "not-held")
    if field(form, "confirmed") != held.id:
        return render(
            request,
            "hold_confirm.html",
            viewer,
            title="Confirm the void",
            action="void",
            intent=intent,
            payment=held,
            moving=held.amount_capturable,
            released=held.amount_capturable,
            typed="",
            hold_key=field(form, "hold_key"),
        )
    runtime = viewer.runtime
    scope = runtime.idempotency.scope(
        viewer.caller.application_id, "POST", request.url.path, field(form, "hold_key"), {}
    )
    try:
        await holds.void_payment(runtime.phases, runtime, viewer.caller, held.id, scope)
    except IdempotencyKeyInUse:
        return back_to(request, page + "hold-in-progress")
    except InvalidState:
        return back_to(request, page + "not-held")
    except ProviderError as failed:
        return back_to(request, page + _failed(failed))
    return back_to(request, page + "voided")
