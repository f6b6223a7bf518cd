"""What the exports read, as their repository returns it (payments are payments.records.Payment)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.activity.records import Filters
from payorch.payments.records import Refund


@dataclass(frozen=True, slots=True)
class Window:
    """One application's rows of [from_, to)."""

    application_id: str
    from_: datetime
    to: datetime
    # The activity export's filters besides the range (actor, action, resource); None elsewhere.
    activity: Filters | None = None


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
    authorized: int  # money taken: automatic payments made that day, holds captured that day
    refunded: int
    # Disputes opened that day: still open (the provider holds the money until it ends: it
    # comes back if won) and lost (it went back to the buyer). A won dispute gave it back.
    disputed_held: int
    disputed_lost: int
    # Holds placed that day and still held (REQUIRES_CAPTURE): approved, not money; not in net.
    held: int = 0

    @property
    def disputed(self) -> int:
        """All the day's disputed money away from the merchant, as the provider counts it."""
        return self.disputed_held + self.disputed_lost

    @property
    def net(self) -> int:
        return self.authorized - self.refunded - self.disputed
