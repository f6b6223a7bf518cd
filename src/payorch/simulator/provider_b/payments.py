"""Provider B's payments API: read, search, refund, cancel; and the controls' settle.

Every function runs in the caller's transaction (``conn``) and never commits.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.clock import Clock
from payorch.jsontypes import JsonObject
from payorch.simulator.outbox.records import Notification
from payorch.simulator.provider_b import notify, repository
from payorch.simulator.provider_b.records import (
    SimBPayment,
    SimBPaymentWithRefunds,
    SimBRefund,
    SimBSearchPage,
    SimBStatusChange,
)
from payorch.simulator.provider_b.wire import (
    SEARCH_MAX_LIMIT,
    SimBWireError,
    hundredths,
    not_found,
)


def authorization_code() -> str:
    return f"{secrets.randbelow(900000) + 100000}"


def _payment_id(text: str) -> int:
    if not text.isdigit() or len(text) > 18:
        raise not_found("Payment")
    return int(text)


async def _owned(conn: AsyncConnection, owner: str, number: int, *, for_update: bool = False) -> SimBPayment:
    payment = await repository.get_payment(conn, number, owner=owner, for_update=for_update)
    if payment is None:
        raise not_found("Payment")
    return payment


async def _with_refunds(conn: AsyncConnection, payment: SimBPayment) -> SimBPaymentWithRefunds:
    if payment.refunded_hundredths == 0:
        # Never refunded: each refund (a positive amount) adds to refunded_hundredths in the
        # transaction that writes it (refund above), so there is no row to read.
        return SimBPaymentWithRefunds(payment, [])
    return SimBPaymentWithRefunds(payment, await repository.refunds_of(conn, payment.id))


async def get_payment(conn: AsyncConnection, owner: str, payment_id: str) -> SimBPaymentWithRefunds:
    return await _with_refunds(conn, await _owned(conn, owner, _payment_id(payment_id)))


async def merchant_order(
    conn: AsyncConnection, owner: str, merchant_order_id: str
) -> tuple[int, list[SimBPayment]]:
    """The merchant order's id and its payments (404 when it has none of the owner's)."""
    if not merchant_order_id.isdigit() or len(merchant_order_id) > 18:
        raise not_found("Merchant Order")
    number = int(merchant_order_id)
    found = await repository.payments_of_merchant_order(conn, owner, number)
    if not found:
        raise not_found("Merchant Order")
    return number, found


def _created_range(params: dict[str, str]) -> tuple[datetime, datetime] | None:
    """``range=date_created&begin_date=&end_date=`` (ISO 8601), as the provider's search takes it."""
    if "range" not in params:
        return None
    if params["range"] != "date_created":
        raise SimBWireError(400, "range must be date_created", "bad_request")
    try:
        begin = datetime.fromisoformat(params["begin_date"])
        end = datetime.fromisoformat(params["end_date"])
    except (KeyError, ValueError):
        raise SimBWireError(400, "begin_date and end_date must be ISO 8601 dates", "bad_request") from None
    if begin.tzinfo is None or end.tzinfo is None:
        raise SimBWireError(400, "begin_date and end_date need a time zone", "bad_request")
    return begin.astimezone(UTC), end.astimezone(UTC)


async def search_payments(conn: AsyncConnection, owner: str, params: dict[str, str]) -> SimBSearchPage:
    try:
        limit = int(params.get("limit", "30"))
        offset = int(params.get("offset", "0"))
    except ValueError:
        raise SimBWireError(400, "limit and offset must be numbers", "bad_request") from None
    if not 0 < limit <= SEARCH_MAX_LIMIT or offset < 0:
        raise SimBWireError(400, f"limit must be between 1 and {SEARCH_MAX_LIMIT}", "bad_request")
    if "id" in params and not params["id"].isdigit():
        raise SimBWireError(400, "id invalid", "bad_request")
    criteria = params.get("criteria", "desc")
    if criteria not in ("asc", "desc"):
        raise SimBWireError(400, "criteria must be asc or desc", "bad_request")
    filters = {k: v for k, v in params.items() if k in ("external_reference", "status", "id")}
    total, found = await repository.search_payments(
        conn,
        owner,
        filters,
        params.get("sort", "date_created"),
        criteria == "desc",
        limit,
        offset,
        _created_range(params),
    )
    results = [await _with_refunds(conn, payment) for payment in found]
    return SimBSearchPage(total, limit, offset, results)


async def refund(
    conn: AsyncConnection,
    clock: Clock,
    owner: str,
    payment_id: str,
    data: JsonObject,
    key: str | None,
) -> SimBRefund:
    """Empty body: refund all that is left; ``{amount}``: a part. The key is required; the
    endpoint's wrapper answers a retry under it with the refund it made (simulator/api.py)."""
    if not key:
        raise SimBWireError(400, "Header X-Idempotency-Key is required for this request", "bad_request")
    if len(key) > 255:
        raise SimBWireError(400, "X-Idempotency-Key is too long", "bad_request")
    number = _payment_id(payment_id)
    now = clock.now()
    payment = await _owned(conn, owner, number, for_update=True)
    if payment.status != "approved":
        raise SimBWireError(400, f"Payment with status {payment.status} cannot be refunded", "bad_request")
    left = payment.amount_hundredths - payment.refunded_hundredths
    amount = left
    if data.get("amount") is not None:
        amount = hundredths(data["amount"], currency=payment.currency_id, field="amount")
    if amount > left:
        raise SimBWireError(
            400,
            "The amount to refund exceeds the amount left to refund",
            "bad_request",
            [{"code": 4044, "description": "Invalid refund amount", "data": None}],
        )
    earlier = await repository.refunds_of(conn, number)
    # Increasing per payment (listed in order even when two share a timestamp).
    refund_id = max(r.id for r in earlier) + 1 if earlier else secrets.randbelow(9 * 10**11) + 10**11
    made = SimBRefund(refund_id, owner, number, amount, "approved", now)
    await repository.insert_refund(conn, made)
    full = amount == left
    change = SimBStatusChange(
        status="refunded" if full else "approved",
        status_detail="refunded" if full else "partially_refunded",
        date_last_updated=updated_at(now, payment),
        refunded_hundredths=payment.refunded_hundredths + amount,
    )
    await repository.set_payment_status(conn, number, ("approved",), change)
    return next(r for r in await repository.refunds_of(conn, number) if r.id == refund_id)


async def list_refunds(conn: AsyncConnection, owner: str, payment_id: str) -> list[SimBRefund]:
    number = _payment_id(payment_id)
    await _owned(conn, owner, number)
    return await repository.refunds_of(conn, number)


async def cancel_payment(
    conn: AsyncConnection, clock: Clock, owner: str, payment_id: str, data: JsonObject
) -> SimBPaymentWithRefunds:
    """PUT: only ``{"status": "cancelled"}``, only while the payment is pending or in process."""
    number = _payment_id(payment_id)
    if set(data) != {"status"} or data["status"] != "cancelled":
        raise SimBWireError(400, "Only status=cancelled can be set on this payment", "bad_request")
    now = clock.now()
    payment = await _owned(conn, owner, number, for_update=True)
    change = SimBStatusChange("cancelled", "by_collector", updated_at(now, payment))
    if not await repository.set_payment_status(conn, number, repository.OPEN_STATUSES, change):
        raise SimBWireError(400, f"Payment with status {payment.status} cannot be cancelled", "bad_request")
    return await get_payment(conn, owner, payment_id)


def updated_at(now: datetime, payment: SimBPayment) -> datetime:
    """The payment's next ``date_last_updated``: later than its last one, even within one
    millisecond (or under a frozen clock), as the provider's own order of its states is."""
    return max(now, payment.date_last_updated + timedelta(milliseconds=1))


@dataclass(frozen=True, slots=True)
class Transition:
    """What the controls' settle does to the intent's payments in ``before`` (and, when set,
    with ``detail_before``)."""

    before: tuple[str, ...]
    status: str
    status_detail: str
    detail_before: str | None = None


# docs/simulator.md, "Controls": every status provider B's payments move through.
TRANSITIONS = {
    "approve": Transition(repository.OPEN_STATUSES, "approved", "accredited"),
    "reject": Transition(repository.OPEN_STATUSES, "rejected", "cc_rejected_other_reason"),
    "cancel": Transition(repository.OPEN_STATUSES, "cancelled", "expired"),
    # After the payment: the buyer opens a dispute (mediation), or the card issuer a chargeback.
    "mediation": Transition(("approved",), "in_mediation", "in_mediation"),
    "mediation_won": Transition(("in_mediation",), "approved", "accredited"),
    "mediation_lost": Transition(("in_mediation",), "refunded", "bpp_refunded"),
    "chargeback": Transition(("approved", "in_mediation"), "charged_back", "in_process"),
    "chargeback_won": Transition(("charged_back",), "charged_back", "reimbursed", "in_process"),
    "chargeback_lost": Transition(("charged_back",), "charged_back", "settled", "in_process"),
}


async def settle(
    conn: AsyncConnection,
    clock: Clock,
    public_url: str,
    owner: str,
    payment_intent_id: str,
    outcome: str,
) -> tuple[list[int], list[Notification]]:
    """Move the intent's payments as ``outcome`` says (TRANSITIONS); their ids and the
    notifications written for them (to send once this transaction committed)."""
    now = clock.now()
    move = TRANSITIONS[outcome]
    settled: list[int] = []
    notifications: list[Notification] = []
    for payment in await repository.payments_for_reference(conn, owner, payment_intent_id, move.before):
        if move.detail_before is not None and payment.status_detail != move.detail_before:
            continue
        approve = move.status == "approved" and payment.status in repository.OPEN_STATUSES
        change = SimBStatusChange(
            status=move.status,
            status_detail=move.status_detail,
            date_last_updated=updated_at(now, payment),
            date_approved=now if approve else None,
            authorization_code=authorization_code() if approve else None,
            refunded_hundredths=payment.amount_hundredths if move.status == "refunded" else None,
        )
        if not await repository.set_payment_status(conn, payment.id, move.before, change):
            continue
        settled.append(payment.id)
        updated = await _owned(conn, owner, payment.id)
        sent = await notify.enqueue(conn, public_url, updated, "payment.updated", now)
        if sent:
            notifications.append(sent)
    return settled, notifications
