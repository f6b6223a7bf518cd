"""What the exports read, as their repository returns it (payments are payments.records.Payment)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.payments.records import Refund


@dataclass(frozen=True, slots=True)
class Window:
    """One application's rows of [from_, to)."""

    application_id: str
    from_: datetime
    to: datetime


@dataclass(frozen=True, slots=True)
class RefundLine:
    """A refund and what its payment says about it."""

    refund: Refund
    external_reference: str
    merchant_account_id: str
    provider: str


@dataclass(frozen=True, slots=True)
class Balance:
    """One UTC day, currency and provider, in minor units."""

    day: str  # YYYY-MM-DD
    currency: str
    provider: str
    authorized: int
    refunded: int
    disputed: int

    @property
    def net(self) -> int:
        return self.authorized - self.refunded - self.disputed
