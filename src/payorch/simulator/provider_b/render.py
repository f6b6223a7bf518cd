"""Provider B's JSON answers (preference, payment, refund), as the real API shapes them."""

from __future__ import annotations

from datetime import datetime

from payorch.clock import isoformat
from payorch.jsontypes import JsonObject
from payorch.simulator.provider_b.records import (
    SimBPayment,
    SimBPaymentWithRefunds,
    SimBPreference,
    SimBRefund,
    SimBSearchPage,
)
from payorch.simulator.provider_b.wire import (
    PAGE_PATH,
    SITE_ID,
    amount_out,
    collector_of,
    json_object,
)


def _iso(moment: datetime | None) -> str | None:
    return isoformat(moment) if moment is not None else None


def preference_body(preference: SimBPreference, public_url: str) -> JsonObject:
    body = preference.body
    back_urls = json_object(body.get("back_urls"))
    init_point = f"{public_url}{PAGE_PATH}?pref_id={preference.id}"
    collector = collector_of(preference.owner)
    return {
        "id": preference.id,
        "collector_id": collector,
        "client_id": str(collector),
        "operation_type": "regular_payment",
        "site_id": SITE_ID,
        "items": body.get("items", []),
        "payer": body.get("payer", {}),
        "back_urls": {k: back_urls.get(k, "") or "" for k in ("success", "failure", "pending")},
        "auto_return": body.get("auto_return", "") or "",
        "payment_methods": body.get("payment_methods", {}),
        "external_reference": body.get("external_reference", "") or "",
        "notification_url": body.get("notification_url"),
        "expires": preference.expires,
        "expiration_date_from": _iso(preference.expiration_date_from),
        "expiration_date_to": _iso(preference.expiration_date_to),
        "metadata": body.get("metadata", {}),
        "marketplace": "NONE",
        "binary_mode": bool(body.get("binary_mode", False)),
        "statement_descriptor": body.get("statement_descriptor"),
        "additional_info": body.get("additional_info", ""),
        "date_created": isoformat(preference.created_at),
        "init_point": init_point,
        "sandbox_init_point": init_point,
    }


def refund_body(refund: SimBRefund) -> JsonObject:
    amount = amount_out(refund.amount_hundredths)
    return {
        "id": refund.id,
        "payment_id": refund.payment_id,
        "amount": amount,
        "metadata": {},
        "source": {
            "id": str(collector_of(refund.owner)),
            "name": "Sandbox collector",
            "type": "collector",
        },
        "date_created": isoformat(refund.date_created),
        "unique_sequence_number": None,
        "refund_mode": "standard",
        "adjustment_amount": 0,
        "status": refund.status,
        "reason": None,
        "labels": [],
        "amount_refunded_to_payer": amount,
        "partition_details": [],
    }


def payment_body(payment: SimBPayment, refunds: list[SimBRefund]) -> JsonObject:
    amount = amount_out(payment.amount_hundredths)
    card = {"visa": "6623", "master": "0568"}.get(payment.payment_method_id)
    return {
        "id": payment.id,
        "date_created": isoformat(payment.date_created),
        "date_approved": _iso(payment.date_approved),
        "date_last_updated": isoformat(payment.date_last_updated),
        "money_release_date": _iso(payment.date_approved),
        "operation_type": "regular_payment",
        "payment_method_id": payment.payment_method_id,
        "payment_type_id": payment.payment_type_id,
        "status": payment.status,
        "status_detail": payment.status_detail,
        "currency_id": payment.currency_id,
        "description": payment.description,
        "live_mode": False,
        "collector_id": payment.collector_id,
        "payer": {"type": "guest", "email": "test_user@testuser.com", "id": None},
        "metadata": {},
        "order": {"id": payment.merchant_order_id, "type": "mercadopago"},
        "external_reference": payment.external_reference,
        "transaction_amount": amount,
        "transaction_amount_refunded": amount_out(payment.refunded_hundredths),
        "installments": 1,
        "transaction_details": {
            "net_received_amount": amount,
            "total_paid_amount": amount,
            "installment_amount": amount,
            "overpaid_amount": 0,
        },
        "captured": True,
        "binary_mode": False,
        "card": {"last_four_digits": card} if card else {},
        "authorization_code": payment.authorization_code,
        "notification_url": payment.notification_url,
        "processing_mode": "aggregator",
        "refunds": [refund_body(r) for r in refunds],
    }


def with_refunds_body(found: SimBPaymentWithRefunds) -> JsonObject:
    return payment_body(found.payment, found.refunds)


def search_body(page: SimBSearchPage) -> JsonObject:
    return {
        "paging": {"total": page.total, "limit": page.limit, "offset": page.offset},
        "results": [with_refunds_body(found) for found in page.results],
    }


def merchant_order_body(merchant_order_id: int, found: list[SimBPayment]) -> JsonObject:
    """A merchant order: the preference's payment attempts, as ``GET /merchant_orders/{id}``."""
    first = found[0]
    paid = sum(p.amount_hundredths for p in found if p.status == "approved")
    return {
        "id": merchant_order_id,
        "preference_id": first.preference_id,
        "external_reference": first.external_reference,
        "status": "closed" if paid >= first.amount_hundredths else "opened",
        "order_status": "paid" if paid >= first.amount_hundredths else "payment_required",
        "collector": {"id": first.collector_id},
        "total_amount": amount_out(first.amount_hundredths),
        "paid_amount": amount_out(paid),
        "payments": [
            {
                "id": p.id,
                "transaction_amount": amount_out(p.amount_hundredths),
                "total_paid_amount": amount_out(p.amount_hundredths),
                "currency_id": p.currency_id,
                "status": p.status,
                "status_detail": p.status_detail,
                "date_approved": _iso(p.date_approved),
                "date_created": isoformat(p.date_created),
                "last_modified": isoformat(p.date_last_updated),
            }
            for p in found
        ],
    }
