"""Recording, reading and listing payments (refunds live in refunds.py)."""

from __future__ import annotations

import base64
import binascii
import re
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.errors import ResourceNotFound, ValidationFailed
from payorch.ids import lowest_id
from payorch.pagination import Page, page_of
from payorch.payments import repository
from payorch.payments.records import Payment
from payorch.payments.schemas import PAYMENT_STATUSES

_PAYMENT_ID = re.compile(r"^pay_[0-9a-z]{29}$")


async def record_authorization(
    conn: AsyncConnection,
    *,
    payment_id: str,
    application_id: str,
    payment_intent_id: str,
    merchant_account_id: str,
    external_reference: str,
    amount: int,
    currency: str,
    provider: str,
    provider_reference: str,
    authorization_code: str | None,
    authorized_at: datetime,
    at: datetime,
) -> Payment:
    """The payment of an intent the provider authorized, in the caller's transaction (the one
    that moves the intent). The unique payment_intent_id is the last guard: a second
    authorization of the same intent fails here."""
    payment = Payment(
        id=payment_id,
        application_id=application_id,
        payment_intent_id=payment_intent_id,
        merchant_account_id=merchant_account_id,
        external_reference=external_reference,
        status="AUTHORIZED",
        amount=amount,
        refunded_amount=0,
        currency=currency,
        provider=provider,
        provider_reference=provider_reference,
        authorization_code=authorization_code,
        authorized_at=authorized_at,
        created_at=at,
    )
    await repository.insert_payment(conn, payment)
    return payment


def no_payment(payment_id: str) -> ResourceNotFound:
    """404 for a payment id; an intent's id (a common slip) gets told where the payment id is."""
    if payment_id.startswith("payi_"):
        return ResourceNotFound(
            f"{payment_id} is a payment intent id, not a payment id. Use the intent's "
            "payment.id (pay_...), which the intent carries once authorized "
            f"(GET /v1/payment-intents/{payment_id})."
        )
    return ResourceNotFound(f"No payment {payment_id}.")


async def read_payment(conn: AsyncConnection, caller: Caller, payment_id: str) -> Payment:
    payment = await repository.get(conn, caller.application_id, payment_id)
    if payment is None:
        raise no_payment(payment_id)
    return payment


async def list_payments(
    conn: AsyncConnection,
    caller: Caller,
    *,
    status: str | None,
    from_: str | None,
    to: str | None,
    cursor: str | None,
    limit: int,
) -> Page[Payment]:
    if status is not None and status not in PAYMENT_STATUSES:
        raise ValidationFailed.field("status", f"must be one of {', '.join(PAYMENT_STATUSES)}")
    # Ids are time-ordered to the millisecond, so a time range is an id range on the same index.
    lowest = lowest_id("pay", _millis(parse_instant("from", from_))) if from_ else None
    below = lowest_id("pay", _millis(parse_instant("to", to))) if to else None
    if cursor is not None:
        after = decode_cursor(cursor)
        below = after if below is None else min(below, after)
    items = await repository.page(
        conn,
        caller.application_id,
        status=status,
        lowest_id=lowest,
        below_id=below,
        limit=limit + 1,
    )
    return page_of(items, limit, lambda payment: payment.id)


def parse_instant(field: str, value: str) -> datetime:
    """A date (midnight UTC) or an ISO 8601 timestamp; one without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValidationFailed.field(
            field, "must be a date (2026-11-22) or an ISO 8601 timestamp (2026-11-22T10:00:00Z)"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _millis(moment: datetime) -> int:
    return max(0, int(moment.timestamp() * 1000))


def decode_cursor(cursor: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    if not _PAYMENT_ID.match(raw):
        raise ValidationFailed.field("cursor", "is not a cursor this API gave")
    return raw
