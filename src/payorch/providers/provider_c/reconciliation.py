"""Provider C's side of a day: Checkout Sessions and PaymentIntents listed by creation time
(``created[gte]`` / ``created[lt]``, 100 a page, ``starting_after``), and refunds and disputes
listed by creation time from the day's start to now (each comes after its payment, often days
later). A PaymentIntent's latest dispute is read as a ``charge.dispute.*`` event's is.

A PaymentIntent is the payment (payorch keeps its id); its session says which checkout it was
paid through and ``client_reference_id`` names payorch's intent. Amounts are in the provider's
unit, which is the ISO minor unit for every currency payorch charges through it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypeVar

from pydantic import BaseModel

from payorch.providers.base import ConnectorContext, DisputeObservation, ProviderUnavailable
from payorch.providers.calls import call
from payorch.providers.provider_c import wire
from payorch.providers.provider_c.adapter import headers_for as headers_of
from payorch.providers.provider_c.payment_results import dispute_of
from payorch.providers.provider_c.refusals import rejected
from payorch.providers.reconciliation import (
    DayWindow,
    KnownCheckout,
    ProviderPaymentRecord,
    ProviderPaymentState,
)

PAGE = 100  # the lists' largest page
PENDING = frozenset(
    {wire.PROCESSING, wire.REQUIRES_ACTION, wire.REQUIRES_CONFIRMATION, wire.REQUIRES_CAPTURE}
)


class _IntentList(BaseModel):
    data: list[wire.PaymentIntent]
    has_more: bool = False


Listed = TypeVar("Listed", wire.SessionList, _IntentList, wire.RefundList, wire.DisputeList)


def _state(status: str) -> ProviderPaymentState:
    if status == wire.SUCCEEDED:
        return ProviderPaymentState.PAID
    return ProviderPaymentState.PENDING if status in PENDING else ProviderPaymentState.NOT_PAID


def _latest_disputes(disputes: Sequence[wire.Dispute]) -> dict[str, DisputeObservation]:
    """Each PaymentIntent's latest dispute, as its event would be read; a status payorch does not
    know is left out (its events are not guessed either). Latest: by opening (whole seconds);
    in the same second an open one, since the provider opens one only after the last ended."""
    latest: dict[str, wire.Dispute] = {}
    for dispute in sorted(disputes, key=lambda d: (d.created or 0, d.status in wire.DISPUTE_OPEN, d.id)):
        if dispute.payment_intent:
            latest[dispute.payment_intent] = dispute  # a later one replaces an earlier one
    found = {}
    for intent_id, dispute in latest.items():
        try:
            found[intent_id] = dispute_of(dispute)
        except ProviderUnavailable:
            continue
    return found


def _seconds(moment: datetime) -> str:
    return str(int(moment.timestamp()))


class ProviderCReader:
    def lookback(self) -> timedelta | None:
        return None  # its lists reach back as far as its records

    async def read_day(
        self, ctx: ConnectorContext, day: DayWindow, known: Sequence[KnownCheckout]
    ) -> list[ProviderPaymentRecord]:
        pages = await self._pages(ctx, wire.SESSIONS, wire.SessionList, day.start, day.until)
        sessions = [session for page in pages for session in page.data]
        listed = await self._pages(ctx, wire.PAYMENT_INTENTS, _IntentList, day.start, day.until)
        intents = [intent for page in listed for intent in page.data]
        read = await self._pages(ctx, wire.REFUNDS, wire.RefundList, day.start, day.through_now)
        refunds = [refund for page in read for refund in page.data]
        opened = await self._pages(ctx, wire.DISPUTES, wire.DisputeList, day.start, day.through_now)
        dispute_of_intent = _latest_disputes([dispute for page in opened for dispute in page.data])
        session_of = {
            s.payment_intent if isinstance(s.payment_intent, str) else s.payment_intent.id: s
            for s in sessions
            if s.payment_intent is not None
        }
        refunded: dict[str, int] = defaultdict(int)
        for refund in refunds:
            if refund.payment_intent and refund.status == wire.REFUND_SUCCEEDED:
                refunded[refund.payment_intent] += refund.amount
        records = []
        for intent in intents:
            session = session_of.get(intent.id)
            reference = intent.metadata.get("payment_intent_id") or (
                session.client_reference_id if session is not None else None
            )
            records.append(
                ProviderPaymentRecord(
                    reference=intent.id,
                    checkout_reference=session.id if session is not None else None,
                    payment_intent_id=reference,
                    state=_state(intent.status),
                    provider_status=intent.status,
                    amount=intent.amount,
                    currency=intent.currency.upper(),
                    refunded=refunded[intent.id],
                    dispute=dispute_of_intent.get(intent.id),
                    created_at=datetime.fromtimestamp(intent.created, day.start.tzinfo)
                    if intent.created is not None
                    else None,
                )
            )
        return records

    async def _pages(
        self, ctx: ConnectorContext, path: str, model: type[Listed], since: datetime, until: datetime
    ) -> list[Listed]:
        """Every page of a list (newest first, as the provider lists)."""
        found: list[Listed] = []
        after: str | None = None
        while True:
            params = {"limit": str(PAGE), "created[gte]": _seconds(since), "created[lt]": _seconds(until)}
            if after is not None:
                params["starting_after"] = after
            page = await call(
                ctx, "list", "GET", path, model, headers=headers_of(ctx), refusals=rejected, params=params
            )
            found.append(page)
            if not page.has_more or not page.data:
                return found
            after = page.data[-1].id
