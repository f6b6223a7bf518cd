"""Provider B's rules: preferences, the buyer's choice, payments, refunds, cancel, settle."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from payorch.clock import isoformat
from payorch.runtime import Runtime
from payorch.simulator.provider_b import notify, repository
from payorch.simulator.provider_b.wire import (
    SEARCH_MAX_LIMIT,
    SITE_ID,
    WireError,
    amount_out,
    check_preference,
    hundredths,
    not_found,
)

PAGE_PATH = "/simulator/provider_b/checkout/v1/redirect"
OUTCOMES = ("approve", "reject", "pending", "cancel")
# payment fields per outcome: status, status_detail, payment_type_id, payment_method_id
_RESULTS = {
    "approve": ("approved", "accredited", "credit_card", "visa"),
    "reject": ("rejected", "cc_rejected_other_reason", "credit_card", "master"),
    "pending": ("pending", "pending_waiting_payment", "ticket", "servipag"),
}


def collector_of(owner: str) -> int:
    """A stable numeric collector (seller) id per application."""
    return 100_000_000 + int(hashlib.sha256(owner.encode()).hexdigest()[:8], 16) % 900_000_000


def _iso(moment: datetime | None) -> str | None:
    return isoformat(moment) if moment is not None else None


def preference_body(row: Any, public_url: str) -> dict[str, Any]:
    body = dict(row.body)
    init_point = f"{public_url}{PAGE_PATH}?pref_id={row.id}"
    collector = collector_of(row.owner)
    return {
        "id": row.id,
        "collector_id": collector,
        "client_id": str(collector),
        "operation_type": "regular_payment",
        "site_id": SITE_ID,
        "items": body.get("items", []),
        "payer": body.get("payer", {}),
        "back_urls": {
            k: body.get("back_urls", {}).get(k, "") or "" for k in ("success", "failure", "pending")
        },
        "auto_return": body.get("auto_return", "") or "",
        "payment_methods": body.get("payment_methods", {}),
        "external_reference": body.get("external_reference", "") or "",
        "notification_url": body.get("notification_url"),
        "expires": row.expires,
        "expiration_date_from": _iso(row.expiration_date_from),
        "expiration_date_to": _iso(row.expiration_date_to),
        "metadata": body.get("metadata", {}),
        "marketplace": "NONE",
        "binary_mode": bool(body.get("binary_mode", False)),
        "statement_descriptor": body.get("statement_descriptor"),
        "additional_info": body.get("additional_info", ""),
        "date_created": isoformat(row.created_at),
        "init_point": init_point,
        "sandbox_init_point": init_point,
    }


def _columns(checked: dict[str, Any]) -> dict[str, Any]:
    return {
        "external_reference": checked.get("external_reference"),
        "currency_id": checked["_currency"],
        "amount_hundredths": checked["_amount"],
        "expires": checked["expires"],
        "expiration_date_from": checked["_from"],
        "expiration_date_to": checked["_to"],
        "body": {k: v for k, v in checked.items() if not k.startswith("_")},
    }


async def create_preference(runtime: Runtime, owner: str, data: dict[str, Any]) -> dict[str, Any]:
    checked = check_preference(data)
    preference_id = f"{collector_of(owner)}-{uuid.uuid4()}"
    async with runtime.database.transaction() as conn:
        await repository.insert_preference(
            conn, id=preference_id, owner=owner, created_at=runtime.clock.now(), **_columns(checked)
        )
        row = await repository.get_preference(conn, preference_id)
    return preference_body(row, runtime.settings.public_url)


async def get_preference(runtime: Runtime, owner: str, preference_id: str) -> dict[str, Any]:
    async with runtime.database.transaction() as conn:
        row = await repository.get_preference(conn, preference_id, owner=owner)
    if row is None:
        raise not_found("Preference")
    return preference_body(row, runtime.settings.public_url)


async def update_preference(
    runtime: Runtime, owner: str, preference_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """PUT: any field may change (e.g. ``expires`` + ``expiration_date_to`` to expire it now)."""
    async with runtime.database.transaction() as conn:
        row = await repository.get_preference(conn, preference_id, owner=owner)
        if row is None:
            raise not_found("Preference")
        merged = {**row.body, **data}
        if row.expiration_date_from and "expiration_date_from" not in data:
            merged["expiration_date_from"] = isoformat(row.expiration_date_from)
        if row.expiration_date_to and "expiration_date_to" not in data:
            merged["expiration_date_to"] = isoformat(row.expiration_date_to)
        await repository.update_preference(
            conn, preference_id, **_columns(check_preference(merged))
        )
        row = await repository.get_preference(conn, preference_id)
    return preference_body(row, runtime.settings.public_url)


def is_expired(preference: Any, now: datetime) -> bool:
    if not preference.expires:
        return False
    if preference.expiration_date_to is not None and now >= preference.expiration_date_to:
        return True
    return preference.expiration_date_from is not None and now < preference.expiration_date_from


def refund_body(row: Any) -> dict[str, Any]:
    amount = amount_out(row.amount_hundredths)
    return {
        "id": row.id,
        "payment_id": row.payment_id,
        "amount": amount,
        "metadata": {},
        "source": {
            "id": str(collector_of(row.owner)),
            "name": "Sandbox collector",
            "type": "collector",
        },
        "date_created": isoformat(row.date_created),
        "unique_sequence_number": None,
        "refund_mode": "standard",
        "adjustment_amount": 0,
        "status": row.status,
        "reason": None,
        "labels": [],
        "amount_refunded_to_payer": amount,
        "partition_details": [],
    }


def payment_body(row: Any, refunds: list[Any]) -> dict[str, Any]:
    amount = amount_out(row.amount_hundredths)
    card = {"visa": "6623", "master": "0568"}.get(row.payment_method_id)
    return {
        "id": row.id,
        "date_created": isoformat(row.date_created),
        "date_approved": _iso(row.date_approved),
        "date_last_updated": isoformat(row.date_last_updated),
        "money_release_date": _iso(row.date_approved),
        "operation_type": "regular_payment",
        "payment_method_id": row.payment_method_id,
        "payment_type_id": row.payment_type_id,
        "status": row.status,
        "status_detail": row.status_detail,
        "currency_id": row.currency_id,
        "description": row.description,
        "live_mode": False,
        "collector_id": row.collector_id,
        "payer": {"type": "guest", "email": "test_user@testuser.com", "id": None},
        "metadata": {},
        "order": {"id": row.merchant_order_id, "type": "mercadopago"},
        "external_reference": row.external_reference,
        "transaction_amount": amount,
        "transaction_amount_refunded": amount_out(row.refunded_hundredths),
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
        "authorization_code": row.authorization_code,
        "notification_url": row.notification_url,
        "processing_mode": "aggregator",
        "refunds": [refund_body(r) for r in refunds],
    }


def _payment_id(text: str) -> int:
    if not text.isdigit() or len(text) > 18:
        raise not_found("Payment")
    return int(text)


async def get_payment(runtime: Runtime, owner: str, payment_id: str) -> dict[str, Any]:
    number = _payment_id(payment_id)
    async with runtime.database.transaction() as conn:
        row = await repository.get_payment(conn, number, owner=owner)
        if row is None:
            raise not_found("Payment")
        refunds = await repository.refunds_of(conn, number)
    return payment_body(row, refunds)


async def search_payments(runtime: Runtime, owner: str, params: dict[str, str]) -> dict[str, Any]:
    try:
        limit = int(params.get("limit", "30"))
        offset = int(params.get("offset", "0"))
    except ValueError:
        raise WireError(400, "limit and offset must be numbers", "bad_request") from None
    if not 0 < limit <= SEARCH_MAX_LIMIT or offset < 0:
        raise WireError(400, f"limit must be between 1 and {SEARCH_MAX_LIMIT}", "bad_request")
    if "id" in params and not params["id"].isdigit():
        raise WireError(400, "id invalid", "bad_request")
    criteria = params.get("criteria", "desc")
    if criteria not in ("asc", "desc"):
        raise WireError(400, "criteria must be asc or desc", "bad_request")
    filters = {k: v for k, v in params.items() if k in ("external_reference", "status", "id")}
    async with runtime.database.transaction() as conn:
        total, rows = await repository.search_payments(
            conn,
            owner,
            filters,
            params.get("sort", "date_created"),
            criteria == "desc",
            limit,
            offset,
        )
        results = [payment_body(row, await repository.refunds_of(conn, row.id)) for row in rows]
    return {"paging": {"total": total, "limit": limit, "offset": offset}, "results": results}


@dataclass
class RefundResult:
    body: dict[str, Any]
    replayed: bool


async def refund(
    runtime: Runtime, owner: str, payment_id: str, data: dict[str, Any], key: str | None
) -> RefundResult:
    """Empty body: refund all that is left; ``{amount}``: a part. One refund per idempotency key."""
    if not key:
        raise WireError(400, "Header X-Idempotency-Key is required for this request", "bad_request")
    if len(key) > 255:
        raise WireError(400, "X-Idempotency-Key is too long", "bad_request")
    number = _payment_id(payment_id)
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        payment = await repository.get_payment(conn, number, owner=owner, for_update=True)
        if payment is None:
            raise not_found("Payment")
        previous = await repository.refund_by_key(conn, owner, key)
        if previous is not None:
            if previous.payment_id != number:
                raise WireError(
                    409, "X-Idempotency-Key already used for another request", "conflict"
                )
            return RefundResult(refund_body(previous), replayed=True)
        if payment.status != "approved":
            raise WireError(
                400, f"Payment with status {payment.status} cannot be refunded", "bad_request"
            )
        left = payment.amount_hundredths - payment.refunded_hundredths
        amount = left
        if data.get("amount") is not None:
            amount = hundredths(data["amount"], currency=payment.currency_id, field="amount")
        if amount > left:
            raise WireError(
                400,
                "The amount to refund exceeds the amount left to refund",
                "bad_request",
                [{"code": 4044, "description": "Invalid refund amount", "data": None}],
            )
        earlier = await repository.refunds_of(conn, number)
        # Increasing per payment (listed in order even when two share a timestamp).
        refund_id = (
            max(r.id for r in earlier) + 1 if earlier else secrets.randbelow(9 * 10**11) + 10**11
        )
        await repository.insert_refund(
            conn,
            id=refund_id,
            owner=owner,
            payment_id=number,
            amount_hundredths=amount,
            status="approved",
            idempotency_key=key,
            date_created=now,
        )
        full = amount == left
        await repository.set_payment_status(
            conn,
            number,
            ("approved",),
            status="refunded" if full else "approved",
            status_detail="refunded" if full else "partially_refunded",
            refunded_hundredths=payment.refunded_hundredths + amount,
            date_last_updated=now,
        )
        row = await repository.refund_by_key(conn, owner, key)
    return RefundResult(refund_body(row), replayed=False)


async def list_refunds(runtime: Runtime, owner: str, payment_id: str) -> list[dict[str, Any]]:
    number = _payment_id(payment_id)
    async with runtime.database.transaction() as conn:
        if await repository.get_payment(conn, number, owner=owner) is None:
            raise not_found("Payment")
        return [refund_body(r) for r in await repository.refunds_of(conn, number)]


async def update_payment(
    runtime: Runtime, owner: str, payment_id: str, data: dict[str, Any]
) -> dict[str, Any]:
    """Only ``{"status": "cancelled"}``, only while the payment is pending or in process."""
    number = _payment_id(payment_id)
    if set(data) != {"status"} or data["status"] != "cancelled":
        raise WireError(400, "Only status=cancelled can be set on this payment", "bad_request")
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        row = await repository.get_payment(conn, number, owner=owner, for_update=True)
        if row is None:
            raise not_found("Payment")
        if not await repository.set_payment_status(
            conn,
            number,
            repository.OPEN_STATUSES,
            status="cancelled",
            status_detail="by_collector",
            date_last_updated=now,
        ):
            raise WireError(
                400, f"Payment with status {row.status} cannot be cancelled", "bad_request"
            )
        row = await repository.get_payment(conn, number)
        refunds = await repository.refunds_of(conn, number)
    return payment_body(row, refunds)


# ----- the buyer's page and the settle control ----------------------------------------------------


@dataclass
class PageState:
    preference: Any
    payments: list[Any]

    @property
    def settled(self) -> Any | None:
        """A payment that ends this checkout (approved or waiting): the page cannot pay again."""
        for payment in reversed(self.payments):
            if payment.status in ("approved", "pending", "in_process", "refunded"):
                return payment
        return None


async def page_state(runtime: Runtime, preference_id: str) -> PageState | None:
    async with runtime.database.transaction() as conn:
        preference = await repository.get_preference(conn, preference_id)
        if preference is None:
            return None
        return PageState(preference, await repository.payments_of_preference(conn, preference_id))


@dataclass
class Choice:
    state: PageState
    payment: Any | None  # None: cancelled (or the checkout was already settled / expired)
    outcome: str
    notifications: list[str] = field(default_factory=list)


async def choose(runtime: Runtime, preference_id: str, outcome: str) -> Choice | None:
    """The buyer's button: a payment for approve/reject/pending, nothing for cancel."""
    now = runtime.clock.now()
    async with runtime.database.transaction() as conn:
        # Locked: two buttons pressed at once (two tabs) must not both pay the checkout.
        preference = await repository.get_preference(conn, preference_id, for_update=True)
        if preference is None:
            return None
        state = PageState(preference, await repository.payments_of_preference(conn, preference_id))
        if state.settled is not None:
            return Choice(state, state.settled, "settled")
        if outcome == "cancel" or is_expired(preference, now):
            return Choice(state, None, "cancel")
        status, detail, kind, method = _RESULTS[outcome]
        payment_id = secrets.randbelow(9 * 10**10) + 10**10
        items = preference.body.get("items", [])
        await repository.insert_payment(
            conn,
            id=payment_id,
            owner=preference.owner,
            preference_id=preference.id,
            collector_id=collector_of(preference.owner),
            merchant_order_id=secrets.randbelow(9 * 10**10) + 10**10,
            external_reference=preference.external_reference,
            description=(items[0].get("title") if items else None),
            status=status,
            status_detail=detail,
            payment_type_id=kind,
            payment_method_id=method,
            currency_id=preference.currency_id,
            amount_hundredths=preference.amount_hundredths,
            refunded_hundredths=0,
            authorization_code=f"{secrets.randbelow(900000) + 100000}"
            if status == "approved"
            else None,
            notification_url=preference.body.get("notification_url"),
            date_created=now,
            date_approved=now if status == "approved" else None,
            date_last_updated=now,
        )
        payment = await repository.get_payment(conn, payment_id)
        notifications = []
        if status in ("approved", "rejected"):
            sent = await notify.enqueue(conn, runtime, payment, "payment.created", now)
            notifications = [sent] if sent else []
    return Choice(state, payment, outcome, notifications)


async def settle(
    runtime: Runtime, owner: str, payment_intent_id: str, outcome: str
) -> tuple[list[int], list[str]]:
    """Approve or reject the intent's payments left pending; their ids and notifications."""
    now = runtime.clock.now()
    status, detail = (
        ("approved", "accredited")
        if outcome == "approve"
        else ("rejected", "cc_rejected_other_reason")
    )
    settled: list[int] = []
    notifications: list[str] = []
    async with runtime.database.transaction() as conn:
        for payment in await repository.open_payments_for_reference(conn, owner, payment_intent_id):
            changed = await repository.set_payment_status(
                conn,
                payment.id,
                repository.OPEN_STATUSES,
                status=status,
                status_detail=detail,
                date_last_updated=now,
                date_approved=now if status == "approved" else None,
                authorization_code=f"{secrets.randbelow(900000) + 100000}"
                if status == "approved"
                else None,
            )
            if not changed:
                continue
            settled.append(payment.id)
            row = await repository.get_payment(conn, payment.id)
            sent = await notify.enqueue(conn, runtime, row, "payment.updated", now)
            if sent:
                notifications.append(sent)
    return settled, notifications


def back_params(preference: Any, payment: Any | None) -> dict[str, str]:
    """The query parameters of the return to a back URL (``null`` when the buyer did not pay)."""
    if payment is None:
        paid: dict[str, str] = dict.fromkeys(
            (
                "collection_id",
                "collection_status",
                "payment_id",
                "status",
                "payment_type",
                "merchant_order_id",
            ),
            "null",
        )
    else:
        paid = {
            "collection_id": str(payment.id),
            "collection_status": payment.status,
            "payment_id": str(payment.id),
            "status": payment.status,
            "payment_type": payment.payment_type_id,
            "merchant_order_id": str(payment.merchant_order_id),
        }
    return {
        "collection_id": paid["collection_id"],
        "collection_status": paid["collection_status"],
        "payment_id": paid["payment_id"],
        "status": paid["status"],
        "external_reference": preference.external_reference or "null",
        "payment_type": paid["payment_type"],
        "merchant_order_id": paid["merchant_order_id"],
        "preference_id": preference.id,
        "site_id": SITE_ID,
        "processing_mode": "aggregator",
        "merchant_account_id": "null",
    }


def back_url(preference: Any, payment: Any | None) -> str | None:
    urls = preference.body.get("back_urls", {}) or {}
    status = payment.status if payment is not None else None
    wanted = {
        "approved": "success",
        "refunded": "success",
        "pending": "pending",
        "in_process": "pending",
    }.get(status or "", "failure")
    for name in (wanted, "success", "failure", "pending"):
        if urls.get(name):
            return str(urls[name])
    return None
