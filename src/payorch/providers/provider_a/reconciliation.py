"""Provider A's side of a day: its API lists nothing, so each transaction payorch created that day
is read by its token (``GET /transactions/{token}``, which answers for 7 days after create).

Only reads: an approval found here is committed by the confirmation path, not by the reader.
A transaction made at the provider outside payorch cannot be seen (there is no token to ask).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta

from payorch.providers.base import ConnectorContext
from payorch.providers.calls import read_or_none
from payorch.providers.provider_a import wire
from payorch.providers.provider_a.adapter import headers_for as headers_of
from payorch.providers.provider_a.payment_results import CURRENCY
from payorch.providers.provider_a.refusals import rejected
from payorch.providers.reconciliation import (
    DayWindow,
    KnownCheckout,
    ProviderPaymentRecord,
    ProviderPaymentState,
)

# Transactions read at once (one connector's day can hold many thousands).
CONCURRENCY = 8
PAID_STATES = frozenset(
    {wire.AUTHORIZED, wire.CAPTURED, wire.REVERSED, wire.NULLIFIED, wire.PARTIALLY_NULLIFIED}
)


def _record(
    token: str, status: wire.TransactionStatus, known: KnownCheckout | None = None
) -> ProviderPaymentRecord:
    amount = status.amount or 0
    paid = status.status in PAID_STATES and status.response_code == 0
    balance = status.balance
    if status.status in (wire.REVERSED, wire.NULLIFIED) and balance is None:
        balance = 0
    refunded = amount - balance if paid and balance is not None else 0
    if known is not None and known.held and paid:
        return _held_record(token, status, known, balance)
    return ProviderPaymentRecord(
        reference=token,
        checkout_reference=token,
        payment_intent_id=None,
        state=ProviderPaymentState.PAID
        if paid
        else (
            ProviderPaymentState.NOT_PAID
            if status.status in (wire.FAILED, *PAID_STATES)
            else ProviderPaymentState.PENDING
        ),
        provider_status=status.status,
        amount=amount,
        currency=CURRENCY,
        refunded=refunded,
        dispute=None,
        created_at=status.transaction_date,
    )


def _held_record(
    token: str, status: wire.TransactionStatus, known: KnownCheckout, balance: int | None
) -> ProviderPaymentRecord:
    """A deferred-capture transaction: AUTHORIZED is a hold, not money (nothing to compare
    yet); released whole (REVERSED before a capture) took nothing; once captured, refunds count
    from what payorch captured (the status shows no captured amount, only the balance)."""
    if status.status == wire.AUTHORIZED:
        state = ProviderPaymentState.PENDING
    elif status.status == wire.REVERSED and known.captured in (None, 0):
        state = ProviderPaymentState.NOT_PAID
    else:
        state = ProviderPaymentState.PAID
    captured = known.captured or 0
    refunded = max(captured - balance, 0) if state is ProviderPaymentState.PAID and balance is not None else 0
    amount, at = status.amount or 0, status.transaction_date
    return ProviderPaymentRecord(
        token, token, None, state, status.status, amount, CURRENCY, refunded, None, at
    )


class ProviderAReader:
    def lookback(self) -> timedelta:
        return timedelta(days=wire.STATUS_DAYS)

    async def read_day(
        self, ctx: ConnectorContext, day: DayWindow, known: Sequence[KnownCheckout]
    ) -> list[ProviderPaymentRecord]:
        limit = asyncio.Semaphore(CONCURRENCY)
        oldest = day.now - self.lookback()

        async def one(checkout: KnownCheckout) -> ProviderPaymentRecord | None:
            if checkout.created_at < oldest:
                return None  # the provider no longer answers about it
            async with limit:
                return await self._read(ctx, checkout)

        found = await asyncio.gather(*(one(checkout) for checkout in known))
        return [record for record in found if record is not None]

    async def _read(self, ctx: ConnectorContext, checkout: KnownCheckout) -> ProviderPaymentRecord:
        token = checkout.reference
        path = f"{wire.TRANSACTIONS}/{token}"
        status = await read_or_none(
            ctx, "status", path, wire.TransactionStatus, headers=headers_of(ctx), refusals=rejected
        )
        if status is None:
            return ProviderPaymentRecord(
                token, token, None, ProviderPaymentState.UNKNOWN, "not found", 0, CURRENCY, 0, None, None
            )
        return _record(token, status, checkout)
