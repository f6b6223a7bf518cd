"""The intent page (its outcome and why, fields, timeline, checkouts, payment, refunds, events with
their deliveries) and its refund form."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime

from fastapi import APIRouter, Request
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.responses import Response

from payorch.amount_text import UnreadableAmount, read_amount, rule, written
from payorch.checkouts import service as checkouts
from payorch.checkouts.records import Checkout, CheckoutStatus
from payorch.dashboard.hold_text import hold_outcome
from payorch.dashboard.web import DashboardRoute, FormDep, Viewer, ViewerDep, back_to, field, render
from payorch.errors import (
    IdempotencyKeyInUse,
    PaymentDisputed,
    ProviderError,
    RefundAmountExceeded,
    ValidationFailed,
)
from payorch.events import service as events
from payorch.http.deps import ReadConn, runtime_of
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.jsontypes import JsonObject
from payorch.payments import refunds
from payorch.payments import service as payments
from payorch.payments.records import Payment, Refund
from payorch.payments.schemas import CreateRefund
from payorch.providers.registry import get_adapter
from payorch.webhooks import service as webhooks
from payorch.webhooks.records import Delivery
from payorch.webhooks.schemas import DeliveryListQuery

router = APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)

SHOWN = 100  # events and deliveries shown on an intent's page (an intent has a handful)


@dataclass(frozen=True, slots=True)
class RefundRefused:
    """A form whose amount is refused (``form``: refund, or capture: payorch.dashboard.holds):
    what was typed, and what to type instead."""

    typed: str
    reason: str
    message: str
    form: str = "refund"


@dataclass(frozen=True, slots=True)
class EventRow:
    id: str
    type: str
    created_at: datetime
    deliveries: list[Delivery]
    data: JsonObject


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where the intent stands in words: what happened, why, and what a person can do next."""

    title: str
    why: list[str]
    next_step: str | None
    failed: bool = False


# What a person can do after each payorch payment error code (docs/api.md, "Why a payment failed").
NEXT_STEPS = {
    "declined": "Ask the buyer to pay with another card or method: the shop starts a new payment intent "
    "(this one is final).",
    "insufficient_funds": "Ask the buyer for another card or method, then start a new payment intent.",
    "invalid_card_details": "Ask the buyer to check the card's number, expiry date and security code, "
    "then pay again with a new payment intent.",
    "fraud_suspected": "Do not retry with the same card: review the order before taking another "
    "payment from this buyer.",
    "provider_error": "The provider failed, not the buyer: retry with a new payment intent, with "
    "another provider if it happens again (see Providers).",
    "expired": "The buyer ran out of time: start a new payment intent if they still want to pay.",
    "cancelled_by_buyer": "Nothing was charged. If the buyer still wants to pay, start a new payment intent.",
}


def _reason_of(events: list[EventRow], event_type: str) -> str | None:
    """The ``reason`` of the intent's latest event of ``event_type`` (None: none said)."""
    for event in reversed(events):
        if event.type == event_type and isinstance(event.data.get("reason"), str):
            return str(event.data["reason"])
    return None


def _error_lines(error: JsonObject) -> list[str]:
    """payorch's reason, then the provider's answer: "<provider> answered <code>: <words>"."""
    lines = [f"{str(error.get('message')).rstrip('.')} (code {error.get('code')})."]
    code, words = error.get("provider_code"), error.get("provider_message")
    if code or words:
        said = f"{code}: {words}" if code and words else str(code or words)
        lines.append(f"{error.get('provider') or 'The provider'} answered {said}")
    return lines


def _asking_until(checkout: Checkout) -> str:
    """Until when payorch asks: as long as the provider answers about the checkout."""
    lifetime = get_adapter(checkout.provider).status_lifetime()
    if lifetime is None:
        return "The provider answers about it at any time: payorch keeps asking until it decides."
    until = checkout.created_at + lifetime
    return (
        f"The provider answers about it until {until:%Y-%m-%d %H:%M:%S} UTC; if it has not decided by "
        "then, check the payment in the provider's console."
    )


def outcome_of(
    intent: PaymentIntent,
    checkouts_of: list[Checkout],
    events: list[EventRow],
    payment: Payment | None = None,
    now: datetime | None = None,
) -> Outcome | None:
    """The intent's outcome as the page shows it (None: AUTHORIZED and later, whose payment says it)."""
    if payment is not None and (said := hold_outcome(payment, now or payment.created_at)):
        return Outcome(*said)
    error = intent.last_payment_error
    active = next((c for c in checkouts_of if c.status is CheckoutStatus.ACTIVE), None)
    provider = intent.provider or "the provider"
    if intent.status == "FAILED":
        why = (
            _error_lines(error)
            if error
            else [_reason_of(events, "payment.failed") or "The provider refused it."]
        )
        step = NEXT_STEPS.get(str(error.get("code")) if error else "declined")
        return Outcome("The payment failed; nothing was charged.", why, step, failed=True)
    if intent.status in ("CANCELLED", "EXPIRED"):
        if error:
            why = _error_lines(error)
        elif intent.status == "CANCELLED":
            why = [_reason_of(events, "payment.cancelled") or "Cancelled by the merchant."]
        else:
            why = ["The checkout expired before the buyer paid."]
        title = (
            "Cancelled; nothing was charged."
            if intent.status == "CANCELLED"
            else "Expired; nothing was charged."
        )
        return Outcome(title, why, NEXT_STEPS["cancelled_by_buyer"])
    if intent.status == "PROCESSING":
        waits = _reason_of(events, "payment.processing") or "The provider has the payment in process."
        why = [f"Waiting for {provider} to confirm or refuse the payment: {waits.rstrip('.')}."]
        if active is not None and active.next_check_at is not None:
            why.append(
                f"payorch asks {provider} again at {active.next_check_at:%Y-%m-%d %H:%M:%S} UTC, then "
                "on a back-off (at most hourly) until it answers; its answer makes the intent AUTHORIZED "
                "or FAILED (payment.authorized or payment.failed)."
            )
            why.append(_asking_until(active))
        return Outcome(
            "Processing: waiting for the provider.",
            why,
            "Nothing to do yet: do not ship the order until it is AUTHORIZED.",
        )
    if intent.status == "REQUIRES_ACTION" and active is not None:
        why = [
            f"The buyer is at {provider}'s page until {active.expires_at:%Y-%m-%d %H:%M:%S} UTC; "
            "after that the checkout expires unless the provider shows a payment."
        ]
        return Outcome("Waiting for the buyer.", why, None)
    return None


async def _events(
    conn: AsyncConnection, viewer_app: str, intent_id: str, listed: list[Delivery]
) -> list[EventRow]:
    page = await events.list_events(
        conn, viewer_app, type=None, payment_intent_id=intent_id, cursor=None, limit=SHOWN
    )
    rows = []
    for stored in page.items:
        body: JsonObject = json.loads(stored.payload)
        event_id = str(body["id"])
        rows.append(
            EventRow(
                event_id,
                str(body["type"]),
                datetime.fromisoformat(str(body["created_at"])),
                [d for d in listed if d.event_id == event_id],
                _data_of(body),
            )
        )
    return rows


def _data_of(body: JsonObject) -> JsonObject:
    data = body.get("data")
    return {str(k): v for k, v in data.items()} if isinstance(data, dict) else {}


@router.get("/payments/{intent_id}")
async def intent_page(intent_id: str, request: Request, viewer: ViewerDep, conn: ReadConn) -> Response:
    return await show_intent(request, viewer, conn, intent_id)


async def show_intent(
    request: Request,
    viewer: Viewer,
    conn: AsyncConnection,
    intent_id: str,
    refused: RefundRefused | None = None,
) -> Response:
    """The intent's page; with ``refused``, answered 400 with the refund (or capture) form as it
    was sent and the reason beside its amount field."""
    detail = await intents.read_intent(conn, viewer.caller, intent_id)  # 404 page if not ours
    payment = await payments.read_payment(conn, viewer.caller, detail.payment.id) if detail.payment else None
    listed = await webhooks.list_deliveries(
        conn, viewer.caller, DeliveryListQuery(payment_intent_id=intent_id, limit=SHOWN)
    )
    listed_refunds = await refunds.list_refunds(conn, viewer.caller, payment.id) if payment else []
    intent_checkouts = await checkouts.intent_checkouts(conn, intent_id)
    intent_events = await _events(conn, viewer.caller.application_id, intent_id, listed.items)
    now = viewer.runtime.clock.now()
    return render(
        request,
        "intent.html",
        viewer,
        title=f"Payment {detail.intent.external_reference}",
        detail=detail,
        intent=detail.intent,
        payment=payment,
        refunds=listed_refunds,
        refund_left=left_to_refund(payment, listed_refunds) if payment else 0,
        checkouts=intent_checkouts,
        events=intent_events,
        outcome=outcome_of(detail.intent, intent_checkouts, intent_events, payment, now),
        refund_key=secrets.token_urlsafe(16),  # one per page: a double submit is one refund
        hold_key=secrets.token_urlsafe(16),  # the same for a capture or void
        amount_rule=rule(detail.intent.currency),
        refused=refused if refused and refused.form == "refund" else None,
        capture_refused=refused if refused and refused.form == "capture" else None,
        now=now,
        status_code=400 if refused else 200,
    )


def left_to_refund(payment: Payment, listed: list[Refund]) -> int:
    """What the refunds service will allow: what was taken (all of it, or a hold's capture) less
    refunded and still PENDING refunds."""
    return payment.taken - payment.refunded_amount - sum(r.amount for r in listed if r.status == "PENDING")


def too_much(asked: int, left: int, paid: Payment) -> str:
    """A refund above what is left, in the currency's own format (never minor units)."""
    currency = paid.currency
    if left <= 0:
        return (
            f"nothing is left to refund: {written(paid.refunded_amount, currency)} of the "
            f"{written(paid.taken, currency)} paid is refunded or being refunded."
        )
    return (
        f"{written(asked, currency)} is more than is left. At most {written(left, currency)} is left "
        f"to refund of the {written(paid.taken, currency)} paid: type that or less, or leave the "
        "amount empty to refund all that is left."
    )


@router.post("/payments/{intent_id}/refunds")
async def refund(intent_id: str, request: Request, viewer: ViewerDep, form: FormDep) -> Response:
    phases = runtime_of(request).phases
    async with phases.reading() as conn:
        detail = await intents.read_intent(conn, viewer.caller, intent_id)
        paid = await payments.read_payment(conn, viewer.caller, detail.payment.id) if detail.payment else None
        listed = await refunds.list_refunds(conn, viewer.caller, paid.id) if paid else []
    if paid is None:
        raise ValidationFailed("This intent has no payment to refund.")
    left = left_to_refund(paid, listed)
    page = f"/payments/{intent_id}?notice="
    if paid.dispute_status in refunds.DISPUTED:  # no confirmation of what would be refused
        return back_to(request, page + "disputed")
    text = field(form, "amount")
    try:
        amount = read_amount(text, paid.currency) if text else None
    except UnreadableAmount as unreadable:
        async with phases.reading() as conn:
            sent = RefundRefused(text, field(form, "reason"), str(unreadable))
            return await show_intent(request, viewer, conn, intent_id, sent)
    moving = left if amount is None else amount
    if moving > left or moving <= 0:  # refused before any confirmation, in the currency's units
        async with phases.reading() as conn:
            sent = RefundRefused(text, field(form, "reason"), too_much(moving, max(left, 0), paid))
            return await show_intent(request, viewer, conn, intent_id, sent)
    if 2 * moving > paid.taken:
        # More than half the payment: the person sees the amount in the currency's own format and
        # confirms it; the confirmation carries the amount it showed, so nothing else can move.
        if field(form, "confirmed") != str(moving):
            return render(
                request,
                "refund_confirm.html",
                viewer,
                title="Confirm the refund",
                intent=detail.intent,
                payment=paid,
                moving=moving,
                left=left,
                typed=text,
                reason=field(form, "reason"),
                refund_key=field(form, "refund_key"),
            )
        amount = moving
    given = {"amount": amount, "reason": field(form, "reason") or None}
    fields = {name: value for name, value in given.items() if value is not None}
    body = CreateRefund.model_validate(fields)  # absent, not null: null is refused
    runtime = viewer.runtime
    scope = runtime.idempotency.scope(
        viewer.caller.application_id, "POST", request.url.path, field(form, "refund_key"), fields
    )
    try:
        reply = await refunds.request_refund(phases, runtime, viewer.caller, paid.id, body, scope)
    except IdempotencyKeyInUse:  # the first of a double submit is still running
        return back_to(request, page + "in-progress")
    except ProviderError:  # the FAILED refund is listed with the provider's reason
        return back_to(request, page + "refused")
    except PaymentDisputed:  # disputed since the page was shown: the page now shows the dispute
        return back_to(request, page + "disputed")
    except RefundAmountExceeded as exceeded:  # another refund took the rest since it was read
        available = exceeded.details.get("available_amount")
        async with phases.reading() as conn:
            said = too_much(moving, available if isinstance(available, int) else 0, paid)
            sent = RefundRefused(text, field(form, "reason"), said)
            return await show_intent(request, viewer, conn, intent_id, sent)
    return back_to(request, page + ("pending" if reply.status == 202 else "refunded"))
