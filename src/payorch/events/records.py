"""The records of the events domain, as its repository returns them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Event:
    id: str
    application_id: str
    type: str
    payment_intent_id: str | None  # None: an event about a webhook endpoint
    payload: str  # the exact JSON body a webhook delivery signs and sends
    created_at: datetime
    # The trace context of the span that wrote it (W3C traceparent), None while tracing is off:
    # its webhook attempts' spans continue that trace (observability/tracing.py).
    traceparent: str | None = None


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One event of a payment intent's timeline."""

    type: str
    at: datetime


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as the list of events serves it: its position (seq) and its stored JSON body."""

    seq: int
    payload: str
