"""Provider A's JSON answers, as the real API shapes them."""

from __future__ import annotations

from payorch.clock import isoformat
from payorch.jsontypes import JsonObject
from payorch.simulator.provider_a.records import SimACapture, SimANullification, SimATransaction


def transaction_body(transaction: SimATransaction) -> JsonObject:
    """The answer of commit and status."""
    decided = transaction.decided_at
    balance = (
        transaction.capturable - transaction.nullified_amount
        if transaction.status != "FAILED" and decided
        else None
    )
    card = transaction.card_number
    moment = decided or transaction.created_at
    return {
        "vci": ("TSY" if transaction.response_code == 0 else "TSN") if card else None,
        "amount": transaction.amount,
        "status": transaction.status,
        "buy_order": transaction.buy_order,
        "session_id": transaction.session_id,
        "card_detail": {"card_number": card} if card else None,
        "accounting_date": moment.strftime("%m%d"),
        "transaction_date": isoformat(moment),
        "authorization_code": transaction.authorization_code,
        "payment_type_code": transaction.payment_type_code,
        "response_code": transaction.response_code,
        "installments_amount": None,
        "installments_number": 0,
        "balance": balance,
    }


def refund_body(refund: SimANullification) -> JsonObject:
    if refund.reversed:
        return {"type": "REVERSED"}
    return {
        "type": "NULLIFIED",
        "authorization_code": refund.authorization_code,
        "authorization_date": isoformat(refund.at),
        "nullified_amount": refund.amount,
        "balance": refund.balance,
        "response_code": 0,
    }


def capture_body(capture: SimACapture) -> JsonObject:
    return {
        "token": capture.token,
        "authorization_code": capture.authorization_code,
        "authorization_date": isoformat(capture.at),
        "captured_amount": capture.amount,
        "response_code": 0,
    }
