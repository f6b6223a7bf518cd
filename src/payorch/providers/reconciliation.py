"""What a provider's own records say about one day, in our vocabulary (docs/reconciliation.md).

Each provider declares a ``ReconciliationReader`` in its package (``providers/<name>/
reconciliation.py``) and hands it to its ``ProviderRegistration``; the reconciliation domain
(``payorch.reconciliation``) reads a day through it and compares the answer with payorch's books.
A reader only reads: it never commits, refunds or cancels anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Protocol

from payorch.providers.base import ConnectorContext, DisputeObservation

LATE_PAYMENTS = timedelta(days=1)


class ProviderPaymentState(StrEnum):
    """Where a provider's payment stands, as far as reconciliation compares it."""

    PAID = "PAID"  # approved at the provider (refunds and disputes come on top of it)
    PENDING = "PENDING"  # in process at the provider: nothing to compare yet
    NOT_PAID = "NOT_PAID"  # declined, cancelled, expired, never paid
    UNKNOWN = "UNKNOWN"  # the provider knows no such payment


@dataclass(frozen=True, slots=True)
class ProviderPaymentRecord:
    """One of the provider's payments (or, for provider A, transactions), as its API shows it."""

    reference: str  # what payorch keeps as the payment's provider_reference
    checkout_reference: str | None  # the checkout it was paid through (A token, C session id)
    payment_intent_id: str | None  # payorch's intent id as the provider carries it (None: A)
    state: ProviderPaymentState
    provider_status: str  # the provider's own words, shown to a person
    amount: int  # ISO minor units
    currency: str  # upper case
    refunded: int  # ISO minor units refunded at the provider, however it was asked
    # What the provider shows about the payment's latest dispute, read as a notification's is
    # (with its place in the provider's order): None when it shows none or has no dispute API.
    dispute: DisputeObservation | None
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class KnownCheckout:
    """A checkout payorch handed out that day through the connector (provider A reads by it)."""

    reference: str
    created_at: datetime
    # A manual-capture checkout: the provider holds its approval until captured (provider A's
    # status cannot tell a hold from money taken; payorch's books can). ``captured``: what payorch
    # recorded as captured (refunds count from it).
    held: bool = False
    captured: int | None = None


@dataclass(frozen=True, slots=True)
class DayWindow:
    start: datetime  # UTC midnight
    end: datetime  # the next midnight
    now: datetime

    @property
    def until(self) -> datetime:
        """How far listings read: a checkout of the day may be paid up to a day later (the
        longest checkout lifetime), and its refunds later still (read up to now where the
        provider lists them by their own creation time)."""
        return min(self.end + LATE_PAYMENTS, self.through_now)

    @property
    def through_now(self) -> datetime:
        """An exclusive upper bound that keeps what was made this second (the lists' bounds are
        exclusive, and provider C's are whole seconds)."""
        return self.now + timedelta(seconds=1)


def oldest_day(now: datetime, lookback: timedelta) -> date:
    """The first day (UTC) the provider still answers about in full: its midnight is at most
    ``lookback`` before ``now``. An older day cannot be reconciled with this provider."""
    edge = now - lookback
    day = edge.date()
    return day if datetime.combine(day, time(0), UTC) >= edge else day + timedelta(days=1)


class ReconciliationReader(Protocol):
    def lookback(self) -> timedelta | None:
        """The provider's reconciliation window: how long after its creation the provider still
        answers about a payment (None: its lists reach back as far as its records). It bounds
        the days an application may ask for (reconciliation/days.py, docs/reconciliation.md)."""
        ...

    async def read_day(
        self, ctx: ConnectorContext, day: DayWindow, known: Sequence[KnownCheckout]
    ) -> list[ProviderPaymentRecord]:
        """The provider's payments of the day (and of ``known``'s checkouts). Raises
        ProviderUnavailable / ProviderRejected as the adapter's calls do."""
        ...
