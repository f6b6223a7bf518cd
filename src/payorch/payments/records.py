"""The records of the payments domain (payments and their refunds), as its repository returns them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Payment:
    id: str
    application_id: str
    payment_intent_id: str
    merchant_account_id: str
    external_reference: str
    status: str  # REQUIRES_CAPTURE | AUTHORIZED | PARTIALLY_REFUNDED | REFUNDED | VOIDED
    amount: int
    refunded_amount: int
    currency: str
    provider: str
    provider_reference: str  # token (A) or payment id (B)
    authorization_code: str | None
    authorized_at: datetime
    created_at: datetime
    # A chargeback or mediation after the authorization (payments/disputes.py); while OPEN or
    # after LOST it refuses refunds (payments/refunds.py), it never changes refund arithmetic.
    dispute_status: str | None = None  # OPEN | WON | LOST
    dispute_kind: str | None = None  # chargeback | mediation
    disputed_at: datetime | None = None
    dispute_closed_at: datetime | None = None
    # The newest dispute observation applied, in the provider's order (payments/disputes.py).
    dispute_reference: str | None = None  # the provider's id of the dispute (None: it has none)
    dispute_observed_at: datetime | None = None
    dispute_rank: int | None = None
    # A hold (payments/holds.py): automatic payments are captured whole when authorized.
    capture_method: str = "automatic"
    amount_captured: int = 0  # refunds count from it
    amount_released: int = 0  # released by the provider after a partial capture
    capture_before: datetime | None = None  # a hold lapses then unless captured
    captured_at: datetime | None = None
    # A capture or void sent and not yet settled: what, how much, when to read the provider.
    hold_action: str | None = None
    hold_action_amount: int | None = None
    hold_action_check_at: datetime | None = None
    # A hold nobody captured (payments/lapse_job.py): payment.capture_due sent then (once); the
    # deadline check's next ask of the provider (None: at capture_before).
    capture_due_at: datetime | None = None
    hold_check_at: datetime | None = None

    @property
    def taken(self) -> int:
        """What refunds count from: all of it for capture_method automatic (a row written by a
        release before holds has amount_captured 0, its server default), else what was captured."""
        return self.amount if self.capture_method == "automatic" else self.amount_captured

    @property
    def amount_capturable(self) -> int:
        """What a capture may still take: the hold not captured, while it is held."""
        if self.status != "REQUIRES_CAPTURE":
            return 0
        return self.amount - self.amount_captured - self.amount_released


@dataclass(frozen=True, slots=True)
class Refund:
    id: str  # rfd_; also the provider's idempotency key
    application_id: str
    payment_id: str
    payment_intent_id: str
    status: str  # PENDING | SUCCEEDED | FAILED
    amount: int
    currency: str
    reason: str | None
    failure_reason: str | None
    provider_refund_id: str | None
    idempotency_key: str | None  # the Idempotency-Key that reserved it (released on FAILED)
    next_check_at: datetime | None  # when the worker reads the provider about a PENDING refund
    checks: int
    created_at: datetime
    updated_at: datetime
