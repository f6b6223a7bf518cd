"""One injectable clock, so tests control time without sleeping, and one timestamp format."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FrozenClock:
    """A clock that moves only when told to (tests, benchmarks of time-driven work)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime.now(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)

    def set(self, moment: datetime) -> None:
        self._now = moment


def isoformat(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds: 2026-11-22T10:00:00.123Z."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


_RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


def parse_rfc3339(text: str) -> datetime | None:
    """An RFC 3339 timestamp with its zone (``2026-12-31T23:59:59Z``) as UTC; None for anything
    else (a date alone, no zone, a day or an hour out of range)."""
    if not _RFC3339.match(text):
        return None
    try:
        return datetime.fromisoformat(text.upper()).astimezone(UTC)
    except ValueError:
        return None
