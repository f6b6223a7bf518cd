"""Recording, reading and listing payments (refunds live in refunds.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.errors import ResourceNotFound
from payorch.pagination import Page, id_range, page_of
from payorch.payments import repository
from payorch.payments.records import Payment
from payorch.payments.schemas import PaymentListQuery


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
    capture_method: str = "automatic",
    held: bool = False,
    capture_before: datetime | None = None,
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
        status="REQUIRES_CAPTURE" if held else "AUTHORIZED",
        amount=amount,
        refunded_amount=0,
        currency=currency,
        provider=provider,
        provider_reference=provider_reference,
        authorization_code=authorization_code,
        authorized_at=authorized_at,
        created_at=at,
        capture_method=capture_method,
        amount_captured=0 if held else amount,
        capture_before=capture_before if held else None,
        captured_at=None if held else authorized_at,
    )
    await repository.insert_payment(conn, payment)
    return payment


async def note_authorization_code(
    conn: AsyncConnection, application_id: str, provider: str, provider_reference: str, code: str
) -> None:
    """A payment authorized before the provider's word gave its issuer's code (a provider whose
    notification is its word, the buyer's return first): the code, once, where none was kept.
    Nothing else moves and no event is sent: ``payment.authorized`` went without it."""
    await repository.note_authorization_code(conn, application_id, provider, provider_reference, code)


def no_payment(payment_id: str) -> ResourceNotFound:
    """404 for a payment id; an intent's id (a common slip) gets told where the payment id is."""
    if payment_id.startswith("payi_"):
        return ResourceNotFound(
            f"{payment_id} is a payment intent id, not a payment id. Use the intent's "
            "payment.id (pay_...), which the intent carries once authorized "
            f"(GET /v1/payment-intents/{payment_id})."
        )
    return ResourceNotFound(f"No payment {payment_id}.")


async def find_payment(conn: AsyncConnection, payment_id: str) -> Payment | None:
    """The payment ``payment_id`` of any application (the operator's command line: an id names
    its application)."""
    return await repository.get_any(conn, payment_id)


async def read_payment(conn: AsyncConnection, caller: Caller, payment_id: str) -> Payment:
    payment = await repository.get(conn, caller.application_id, payment_id)
    if payment is None:
        raise no_payment(payment_id)
    return payment


async def list_payments(
    conn: AsyncConnection, caller: Caller, query: PaymentListQuery
) -> Page[Payment]:
    # Ids are time-ordered to the millisecond, so a time range is an id range on the same index.
    lowest, below = id_range("pay", query.cursor, query.from_, query.to)
    items = await repository.page(
        conn,
        caller.application_id,
        status=query.status,
        lowest_id=lowest,
        below_id=below,
        limit=query.limit + 1,
    )
    return page_of(items, query.limit, lambda payment: payment.id)
