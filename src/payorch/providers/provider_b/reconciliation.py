"""Provider B's side of a day: ``GET /v1/payments/search`` by ``date_created`` range, oldest
first, a page of SEARCH_LIMIT at a time. Each payment carries ``external_reference`` (payorch's
intent id), its amount, what was refunded and, as its status, a chargeback or mediation (open
or ended), read as a notification's payment is (``dispute_of``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from payorch.clock import isoformat
from payorch.providers.base import ConnectorContext, PaymentOutcome
from payorch.providers.calls import call
from payorch.providers.provider_b import wire
from payorch.providers.provider_b.adapter import _headers as headers_of
from payorch.providers.provider_b.payment_results import OUTCOME_OF_STATUS, _utc, dispute_of
from payorch.providers.provider_b.refusals import rejected
from payorch.providers.reconciliation import (
    DayWindow,
    KnownCheckout,
    ProviderPaymentRecord,
    ProviderPaymentState,
)

SEARCH_LIMIT = 1000  # the search's largest page
# The payment search covers the last 12 months: an older payment is found only by its id.
SEARCH_WINDOW = timedelta(days=365)
STATE_OF_OUTCOME = {
    PaymentOutcome.AUTHORIZED: ProviderPaymentState.PAID,
    PaymentOutcome.PROCESSING: ProviderPaymentState.PENDING,
}


def _minor(value: Decimal | None, currency: str) -> int:
    return (wire.to_minor(value, currency) or 0) if value is not None else 0


def _record(payment: wire.ProviderBPayment) -> ProviderPaymentRecord:
    currency = (payment.currency_id or "").upper()
    outcome = OUTCOME_OF_STATUS.get(payment.status)
    return ProviderPaymentRecord(
        reference=str(payment.id),
        checkout_reference=None,
        payment_intent_id=payment.external_reference,
        state=STATE_OF_OUTCOME.get(outcome, ProviderPaymentState.NOT_PAID)
        if outcome is not None
        else ProviderPaymentState.PENDING,
        provider_status=f"{payment.status}/{payment.status_detail or ''}",
        amount=_minor(payment.transaction_amount, currency),
        currency=currency,
        refunded=_minor(payment.transaction_amount_refunded, currency),
        dispute=dispute_of(payment),
        created_at=_utc(payment.date_created),
    )


class ProviderBReader:
    def lookback(self) -> timedelta | None:
        return SEARCH_WINDOW

    async def read_day(
        self, ctx: ConnectorContext, day: DayWindow, known: Sequence[KnownCheckout]
    ) -> list[ProviderPaymentRecord]:
        records: list[ProviderPaymentRecord] = []
        offset = 0
        while True:
            page = await self._page(ctx, day.start, day.until, offset)
            records += [_record(payment) for payment in page.results]
            offset += len(page.results)
            total = page.paging.total if page.paging is not None else None
            if not page.results or total is None or offset >= total:
                return records

    async def _page(
        self, ctx: ConnectorContext, start: datetime, until: datetime, offset: int
    ) -> wire.PaymentSearch:
        return await call(
            ctx,
            "search payments",
            "GET",
            wire.PAYMENTS_SEARCH,
            wire.PaymentSearch,
            headers=headers_of(ctx),
            refusals=rejected,
            params={
                "range": "date_created",
                "begin_date": isoformat(start),
                "end_date": isoformat(until),
                "sort": "date_created",
                "criteria": "asc",
                "limit": str(SEARCH_LIMIT),
                "offset": str(offset),
            },
        )
