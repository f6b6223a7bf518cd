"""The webhooks domain's records, as its repository returns them (docs/webhooks.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

PENDING, SUCCEEDED, EXHAUSTED = "PENDING", "SUCCEEDED", "EXHAUSTED"
# disabled_reason: payorch disabled the endpoint because its deliveries kept failing, or it was
# disabled through the API.
AUTO_DISABLED: Final = "failing"
MANUAL: Final = "manual"


@dataclass(frozen=True, slots=True)
class WebhookEndpoint:
    id: str
    application_id: str
    url: str
    events: tuple[str, ...]  # () = every event type
    enabled: bool
    secret_encrypted: str  # runtime.cipher; never returned
    created_at: datetime
    updated_at: datetime
    ordered: bool = False  # one intent's notices one at a time, in event order
    failing_since: datetime | None = None  # every attempt failed since then (None after a 2xx)
    failed_attempts: int = 0  # attempts of that failure streak
    breaker_until: datetime | None = None  # no attempt before then (webhooks/health.py)
    backoff_until: datetime | None = None  # failing fast: no attempt before then (health.py)
    disabled_reason: str | None = None  # AUTO_DISABLED or MANUAL; None while enabled
    disabled_at: datetime | None = None
    # Secret rotation: the replaced secret (runtime.cipher) still signs until it expires.
    previous_secret_encrypted: str | None = None
    previous_secret_expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event to one endpoint: PENDING until a 2xx (SUCCEEDED) or the 7th failed attempt of
    its current schedule (EXHAUSTED)."""

    id: str
    application_id: str
    endpoint_id: str
    event_id: str
    event_type: str
    status: str
    attempts: int  # every attempt ever made (history)
    schedule_attempts: int  # attempts of the current schedule (<= 7)
    next_attempt_at: datetime | None  # None once final, or while the endpoint is disabled
    leased_until: datetime | None
    lease_token: str | None
    last_attempt_at: datetime | None
    response_status: int | None
    response_excerpt: str | None
    error: str | None
    created_at: datetime
    updated_at: datetime
    failure_reason: str | None = None  # the last attempt's, in words (webhooks/failures.py)
    failure_message: str | None = None


@dataclass(frozen=True, slots=True)
class DeliveryAttempt:
    delivery_id: str
    number: int  # 1.. over the delivery's whole history
    started_at: datetime
    duration_ms: int
    response_status: int | None
    response_excerpt: str | None
    error: str | None  # None on success
    failure_reason: str | None = None  # dns_error, timeout, http_status... (failures.py)
    failure_message: str | None = None


@dataclass(frozen=True, slots=True)
class DueEndpoint:
    """An enabled endpoint with a due delivery, as the claim's fair share sees it."""

    id: str
    application_id: str
    ordered: bool = False
    probing: bool = False  # breaker tripped or backed off: one attempt at a time


@dataclass(frozen=True, slots=True)
class DueDelivery:
    """A claimed delivery with what its attempt needs: the endpoint's URL and secret, the
    application's environment, the event's signed body and its trace context."""

    id: str
    application_id: str
    endpoint_id: str
    event_id: str
    attempts: int
    schedule_attempts: int
    url: str
    secret_encrypted: str
    environment: str
    payload: str
    streak_open: bool = False  # its endpoint's failure streak, at the claim
    traceparent: str | None = None  # the event's: its attempt's span continues that trace
    # The endpoint's previous secret while a rotation overlaps (None after it expires).
    previous_secret_encrypted: str | None = None

    @property
    def signing_keys(self) -> tuple[str, ...]:
        """The encrypted secrets that sign the attempt: the current one first."""
        previous = self.previous_secret_encrypted
        return (self.secret_encrypted,) if previous is None else (self.secret_encrypted, previous)


@dataclass(frozen=True, slots=True)
class RecordedAttempt:
    """An attempt's result as it is applied: the attempt row and the delivery's next state."""

    attempt: DeliveryAttempt
    status: str
    schedule_attempts: int
    next_attempt_at: datetime | None


@dataclass(frozen=True, slots=True)
class DeliveryFilter:
    """Which deliveries a page lists (each field unset: any); the repository's own terms, made by
    service.list_deliveries from the API's query."""

    endpoint_id: str | None = None
    statuses: tuple[str, ...] = ()
    event_type: str | None = None
    payment_intent_id: str | None = None
