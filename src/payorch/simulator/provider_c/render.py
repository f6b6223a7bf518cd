"""Simulated provider C's JSON answers, in the provider's object shapes."""

from __future__ import annotations

from datetime import datetime

from payorch.jsontypes import JsonObject
from payorch.simulator.provider_c.records import SimCDispute, SimCPaymentIntent, SimCRefund, SimCSession
from payorch.simulator.provider_c.wire import BASE, PAGE_PATH


def unix(moment: datetime) -> int:
    return int(moment.timestamp())


def session_body(
    session: SimCSession, now: datetime, public_url: str, intent: SimCPaymentIntent | None = None
) -> JsonObject:
    """``intent``: the expanded PaymentIntent (None: its id, as unexpanded)."""
    status = session.status_at(now)
    return {
        "id": session.id,
        "object": "checkout.session",
        "after_expiration": None,
        "allow_promotion_codes": None,
        "amount_subtotal": session.amount_total,
        "amount_total": session.amount_total,
        "automatic_tax": {"enabled": False, "liability": None, "status": None},
        "billing_address_collection": None,
        "cancel_url": session.cancel_url,
        "client_reference_id": session.client_reference_id,
        "created": unix(session.created_at),
        "currency": session.currency,
        "customer": None,
        "customer_email": None,
        "expires_at": unix(session.expires_at),
        "livemode": False,
        "locale": None,
        "metadata": session.metadata,
        "mode": "payment",
        "payment_intent": intent_body(intent) if intent is not None else session.payment_intent_id,
        "payment_method_types": ["card"],
        "payment_status": session.payment_status,
        "status": status,
        "success_url": session.success_url,
        "ui_mode": "hosted",
        "url": public_url + PAGE_PATH.format(session_id=session.id) if status == "open" else None,
    }


# Stripe's error codes that are no decline: the error names them in ``code``, no decline_code.
CARD_ERRORS = frozenset(
    {
        "processing_error",
        "incorrect_number",
        "invalid_number",
        "incorrect_cvc",
        "invalid_cvc",
        "invalid_expiry_month",
        "invalid_expiry_year",
        "expired_card",
    }
)


def payment_error(code: str) -> JsonObject:
    """A failed attempt's ``last_payment_error``, as Stripe shapes a card error."""
    if code in CARD_ERRORS:
        return {"type": "card_error", "code": code, "decline_code": None}
    return {"type": "card_error", "code": "card_declined", "decline_code": code}


def intent_body(intent: SimCPaymentIntent, charge: JsonObject | None = None) -> JsonObject:
    """``charge``: the expanded ``latest_charge`` (None: its id, as unexpanded)."""
    declined = intent.decline_code is not None and intent.status == "requires_payment_method"
    return {
        "id": intent.id,
        "object": "payment_intent",
        "amount": intent.amount,
        "amount_capturable": intent.amount_capturable,
        "amount_received": intent.amount_received,
        "canceled_at": unix(intent.canceled_at) if intent.canceled_at is not None else None,
        "cancellation_reason": intent.cancellation_reason,
        "capture_method": intent.capture_method,
        "client_secret": f"{intent.id}_secret_simulated",
        "confirmation_method": "automatic",
        "created": unix(intent.created_at),
        "currency": intent.currency,
        "latest_charge": charge if charge is not None else intent.latest_charge,
        "last_payment_error": (
            payment_error(intent.decline_code) if declined and intent.decline_code else None
        ),
        "livemode": False,
        "metadata": intent.metadata,
        "payment_method_types": ["card"],
        "status": intent.status,
    }


# The page's approving test card, as a charge shows it.
CARD = {"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2034, "funding": "credit"}


def charge_body(intent: SimCPaymentIntent) -> JsonObject:
    """The PaymentIntent's latest charge. A manual one is authorized until captured or released:
    ``captured`` false, ``payment_method_details.card.capture_before`` its hold's end; once
    captured, ``amount_captured``; what was never captured (a partial capture's rest, a canceled
    or lapsed hold) is released, counted in ``amount_refunded`` with the refunds."""
    captured = intent.status == "succeeded"
    held = intent.status == "requires_capture"
    failed = intent.decline_code is not None and intent.status == "requires_payment_method"
    released = intent.amount - intent.amount_received if not held and not failed else 0
    amount_refunded = released + intent.amount_refunded
    return {
        "id": intent.latest_charge,
        "object": "charge",
        "amount": intent.amount,
        "amount_captured": intent.amount_received,
        "amount_refunded": amount_refunded,
        "captured": captured,
        "created": unix(intent.created_at),
        "currency": intent.currency,
        "livemode": False,
        "metadata": intent.metadata,
        "paid": not failed,
        "payment_intent": intent.id,
        "payment_method_details": {
            "type": "card",
            "card": {
                **CARD,
                "capture_before": (
                    unix(intent.capture_before) if intent.capture_before is not None else None
                ),
            },
        },
        "refunded": amount_refunded == intent.amount and not failed,
        "status": "failed" if failed else ("pending" if intent.status == "processing" else "succeeded"),
    }


def refund_body(refund: SimCRefund) -> JsonObject:
    return {
        "id": refund.id,
        "object": "refund",
        "amount": refund.amount,
        "balance_transaction": None,
        "charge": refund.charge,
        "created": unix(refund.created_at),
        "currency": refund.currency,
        "metadata": refund.metadata,
        "payment_intent": refund.payment_intent_id,
        "reason": refund.reason,
        "status": refund.status,
    }


def dispute_body(dispute: SimCDispute) -> JsonObject:
    return {
        "id": dispute.id,
        "object": "dispute",
        "amount": dispute.amount,
        "balance_transactions": [],
        "charge": dispute.charge,
        "created": unix(dispute.created_at),
        "currency": dispute.currency,
        "is_charge_refundable": False,
        "livemode": False,
        "metadata": {},
        "payment_intent": dispute.payment_intent_id,
        "reason": dispute.reason,
        "status": dispute.status,
    }


def list_body(path: str, data: list[JsonObject], has_more: bool) -> JsonObject:
    return {"object": "list", "data": data, "has_more": has_more, "url": path.removeprefix(BASE)}
