"""What an attempt's result makes of its delivery (docs/webhooks.md, Retries).

A schedule is 7 attempts: the first when the delivery is created (or retried by hand), the next
six PAYORCH_WEBHOOK_RETRY_SCHEDULE seconds after the previous attempt started. A 2xx ends the
delivery SUCCEEDED; the 7th failure of a schedule ends it EXHAUSTED.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from payorch.webhooks.records import (
    EXHAUSTED,
    PENDING,
    SUCCEEDED,
    DeliveryAttempt,
    DueDelivery,
    RecordedAttempt,
)
from payorch.webhooks.sender import AttemptOutcome

ATTEMPTS_PER_SCHEDULE = 7


def next_attempt(
    delivery: DueDelivery,
    outcome: AttemptOutcome,
    *,
    started_at: datetime,
    schedule: Sequence[int],
) -> RecordedAttempt:
    """The attempt's row and the delivery's next state (status, when to try again)."""
    number = delivery.attempts + 1
    in_schedule = delivery.schedule_attempts + 1
    next_at: datetime | None = None
    if outcome.succeeded:
        status = SUCCEEDED
    elif in_schedule >= ATTEMPTS_PER_SCHEDULE:
        status = EXHAUSTED
    else:
        status = PENDING
        next_at = started_at + timedelta(seconds=schedule[in_schedule - 1])
    attempt = DeliveryAttempt(
        delivery_id=delivery.id,
        number=number,
        started_at=started_at,
        duration_ms=outcome.duration_ms,
        response_status=outcome.response_status,
        response_excerpt=outcome.response_excerpt,
        error=outcome.error,
        failure_reason=outcome.failure_reason,
        failure_message=outcome.failure_message,
    )
    return RecordedAttempt(attempt, status, in_schedule, next_at)
