"""Provider B's simulated preferences, payments and refunds, as the repository
returns them. Amounts are integer hundredths (the API speaks decimal numbers)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.jsontypes import JsonObject


@dataclass(frozen=True, slots=True)
class CheckedPreference:
    """A valid preference: the fields the client gave (``body``) and the columns drawn from them
    (wire.check_preference)."""

    body: JsonObject
    external_reference: str | None
    currency_id: str
    amount_hundredths: int
    expires: bool
    expiration_date_from: datetime | None
    expiration_date_to: datetime | None


@dataclass(frozen=True, slots=True)
class SimBPreference(CheckedPreference):
    """A stored preference: the checked one with its id, owner and creation time."""

    id: str  # <collector_id>-<uuid>
    owner: str
    created_at: datetime

    def is_expired(self, now: datetime) -> bool:
        if not self.expires:
            return False
        if self.expiration_date_to is not None and now >= self.expiration_date_to:
            return True
        return self.expiration_date_from is not None and now < self.expiration_date_from


@dataclass(frozen=True, slots=True)
class SimBPayment:
    id: int
    owner: str
    preference_id: str
    collector_id: int
    merchant_order_id: int
    external_reference: str | None
    description: str | None
    status: str  # approved | rejected | pending | in_process | cancelled | refunded
    status_detail: str
    payment_type_id: str
    payment_method_id: str
    currency_id: str
    amount_hundredths: int
    refunded_hundredths: int
    authorization_code: str | None
    notification_url: str | None
    date_created: datetime
    date_approved: datetime | None
    date_last_updated: datetime


@dataclass(frozen=True, slots=True)
class SimBRefund:
    id: int
    owner: str
    payment_id: int
    amount_hundredths: int
    status: str
    date_created: datetime


@dataclass(frozen=True, slots=True)
class SimBStatusChange:
    """A payment's new status (settle, cancel, refund): what the compare-and-set writes."""

    status: str
    status_detail: str
    date_last_updated: datetime
    date_approved: datetime | None = None
    authorization_code: str | None = None
    refunded_hundredths: int | None = None  # None: unchanged


@dataclass(frozen=True, slots=True)
class SimBPaymentWithRefunds:
    """A payment as the API shows it: with its refunds."""

    payment: SimBPayment
    refunds: list[SimBRefund]


@dataclass(frozen=True, slots=True)
class SimBSearchPage:
    total: int
    limit: int
    offset: int
    results: list[SimBPaymentWithRefunds]
