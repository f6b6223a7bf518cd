"""The reconciliation domain's records: runs, findings, and payorch's side of a day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from payorch.jsontypes import JsonObject


class RunStatus(StrEnum):
    QUEUED = "QUEUED"  # asked for; a worker takes it
    RUNNING = "RUNNING"
    DONE = "DONE"
    FAILED = "FAILED"


class FindingKind(StrEnum):
    APPROVED_NOT_RECORDED = "approved_not_recorded"  # paid at the provider, not at payorch
    NOT_PAID_AT_PROVIDER = "not_paid_at_provider"  # paid at payorch, unknown/different there
    AMOUNT_MISMATCH = "amount_mismatch"  # amount or currency differ
    REFUNDED_OUTSIDE = "refunded_outside"  # refunded at the provider beyond payorch's refunds
    DISPUTE_NOT_RECORDED = "dispute_not_recorded"  # a dispute there, none recorded here
    DISPUTE_MISMATCH = "dispute_mismatch"  # a dispute recorded here in another state than there


class FindingAction(StrEnum):
    APPLIED = "APPLIED"  # the provider's word is final: applied through the normal path
    FLAGGED = "FLAGGED"  # for a person to look at


class FindingStatus(StrEnum):
    OPEN = "OPEN"
    RESOLVED = "RESOLVED"


@dataclass(frozen=True, slots=True)
class Run:
    id: str
    application_id: str
    day: str
    status: RunStatus
    summary: JsonObject | None
    error: str | None
    requested_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    lease_until: datetime | None


@dataclass(frozen=True, slots=True)
class Finding:
    id: str
    application_id: str
    day: str
    provider: str
    connector_id: str
    kind: FindingKind
    subject: str
    payment_intent_id: str | None
    action: FindingAction
    status: FindingStatus
    payorch_values: JsonObject
    provider_values: JsonObject
    note: str | None
    resolved_at: datetime | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BookEntry:
    """payorch's side of one checkout: the checkout, its intent and the intent's payment."""

    checkout_reference: str
    checkout_created_at: datetime
    payment_intent_id: str
    intent_status: str
    intent_amount: int
    intent_currency: str
    payment_reference: str | None  # payments.provider_reference (None: no payment)
    payment_amount: int | None
    payment_currency: str | None
    refunded: int  # by payorch's SUCCEEDED refunds
    dispute_status: str | None
    capture_method: str = "automatic"  # the intent's: manual checkouts are held, then captured
    captured: int | None = None  # the payment's amount_captured (None: no payment)
    payment_status: str | None = None  # REQUIRES_CAPTURE, VOIDED, EXPIRED: no money taken

    @property
    def taken(self) -> int:
        """The money the payment took: all of it when captured at authorization, a hold's
        captured part (payments.records.Payment.taken); 0 without a payment."""
        if self.payment_amount is None:
            return 0
        return self.payment_amount if self.capture_method == "automatic" else self.captured or 0
