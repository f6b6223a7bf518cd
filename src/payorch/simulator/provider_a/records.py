"""Provider A's simulated transaction, as the repository returns it (one per token)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from payorch.simulator.provider_a.wire import COMMIT_WINDOW_SECONDS, TOKEN_SECONDS


@dataclass(frozen=True, slots=True)
class SimADecision:
    """What the buyer's choice on the page sets on the transaction."""

    outcome: str  # approve | reject | cancel | timeout | error
    status: str  # AUTHORIZED | FAILED
    response_code: int
    authorization_code: str | None = None
    card_number: str | None = None
    payment_type_code: str | None = None


@dataclass(frozen=True, slots=True)
class SimATransaction:
    token: str
    owner: str
    buy_order: str
    session_id: str
    amount: int
    return_url: str
    created_at: datetime
    outcome: str | None  # the buyer's choice (None: not yet)
    decided_at: datetime | None
    committed_at: datetime | None
    # INITIALIZED | AUTHORIZED | FAILED | REVERSED | NULLIFIED | PARTIALLY_NULLIFIED
    status: str
    response_code: int | None
    authorization_code: str | None
    card_number: str | None
    payment_type_code: str | None
    nullified_amount: int
    deferred: bool  # made with a deferred-capture commerce code: approved means held
    captured_amount: int | None  # its one capture (deferred only)
    captured_at: datetime | None
    capture_before: datetime | None  # the hold's end (deferred, approved)

    @property
    def expires_at(self) -> datetime:
        """A token lives TOKEN_SECONDS after create."""
        return self.created_at + timedelta(seconds=TOKEN_SECONDS)

    def commit_window_over(self, now: datetime) -> bool:
        """The buyer chose more than COMMIT_WINDOW_SECONDS ago (a commit now is refused)."""
        return self.decided_at is not None and now > self.decided_at + timedelta(
            seconds=COMMIT_WINDOW_SECONDS
        )

    def lapsed(self, now: datetime) -> bool:
        """Approved, never committed, and the window is over: the provider reversed it."""
        return self.outcome == "approve" and self.committed_at is None and self.commit_window_over(now)

    def hold_lapsed(self, now: datetime) -> bool:
        """A deferred authorization nobody captured, past its hold's end: released."""
        return (
            self.status == "AUTHORIZED"
            and self.captured_at is None
            and self.capture_before is not None
            and now >= self.capture_before
        )

    @property
    def capturable(self) -> int:
        """What the transaction's balance counts from: the captured amount once captured."""
        return self.captured_amount if self.captured_amount is not None else self.amount

    def as_seen(self, now: datetime) -> SimATransaction:
        """The transaction as the API shows it at ``now``: a lapsed approval reads FAILED
        (response_code -1, no authorization code), as nothing was charged; a lapsed hold reads
        REVERSED with nothing left (the authorization released)."""
        if self.hold_lapsed(now):
            return replace(self, status="REVERSED", nullified_amount=self.amount)
        if not self.lapsed(now):
            return self
        return replace(self, status="FAILED", response_code=-1, authorization_code=None)


@dataclass(frozen=True, slots=True)
class SimANullification:
    """A refund's answer: a reversal, or a nullification leaving ``balance``."""

    reversed: bool
    amount: int
    balance: int
    authorization_code: str
    at: datetime


@dataclass(frozen=True, slots=True)
class SimACapture:
    """A deferred capture's answer."""

    token: str
    authorization_code: str
    at: datetime
    amount: int
