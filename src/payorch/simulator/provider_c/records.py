"""Simulated provider C's objects, as its repository returns them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from payorch.jsontypes import JsonObject


@dataclass(frozen=True, slots=True)
class SimCSession:
    id: str
    owner: str
    status: str
    payment_status: str
    amount_total: int
    currency: str
    client_reference_id: str | None
    payment_intent_id: str | None
    success_url: str
    cancel_url: str | None
    product_name: str
    metadata: JsonObject
    intent_metadata: JsonObject
    capture_method: str  # automatic | manual (payment_intent_data[capture_method])
    expires_at: datetime
    created_at: datetime

    @property
    def ends_at(self) -> datetime:
        """When the session stops taking payment: its ``expires_at``, or payorch's own sooner
        deadline (``metadata[payorch_expires_at]``, unix seconds; the provider allows no less
        than 30 minutes), so the buyer's page and the service name one deadline."""
        value = self.metadata.get("payorch_expires_at")
        if not isinstance(value, str) or not value.isdigit():
            return self.expires_at
        try:
            deadline = datetime.fromtimestamp(int(value), self.expires_at.tzinfo)
        except (OverflowError, OSError, ValueError):  # beyond any calendar: not a deadline
            return self.expires_at
        return min(deadline, self.expires_at)

    def status_at(self, now: datetime) -> str:
        """An open session past its time reads as expired."""
        return "expired" if self.status == "open" and now >= self.ends_at else self.status


@dataclass(frozen=True, slots=True)
class SimCPaymentIntent:
    id: str
    owner: str
    session_id: str
    status: str
    amount: int
    amount_received: int
    amount_refunded: int
    currency: str
    latest_charge: str | None
    decline_code: str | None
    metadata: JsonObject
    capture_method: str  # automatic | manual
    amount_capturable: int  # held, not yet captured (manual only)
    capture_before: datetime | None  # the hold's end (manual, once authorized)
    canceled_at: datetime | None
    cancellation_reason: str | None
    created_at: datetime

    def lapsed(self, now: datetime) -> bool:
        """A hold nobody captured or canceled, past its ``capture_before``."""
        return (
            self.status == "requires_capture"
            and self.capture_before is not None
            and now >= self.capture_before
        )

    def as_seen(self, now: datetime) -> SimCPaymentIntent:
        """As the API shows it at ``now``: a lapsed hold is canceled (``automatic``), whether or
        not the worker's pass has written it yet (holds.lapse_due)."""
        if not self.lapsed(now):
            return self
        assert self.capture_before is not None  # lapsed() checked it
        return replace(
            self,
            status="canceled",
            amount_capturable=0,
            canceled_at=self.capture_before,
            cancellation_reason="automatic",
        )


@dataclass(frozen=True, slots=True)
class SimCRefund:
    id: str
    owner: str
    payment_intent_id: str
    charge: str
    amount: int
    currency: str
    status: str
    reason: str | None
    metadata: JsonObject
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SimCDispute:
    id: str
    owner: str
    payment_intent_id: str
    charge: str
    amount: int
    currency: str
    status: str
    reason: str
    created_at: datetime
