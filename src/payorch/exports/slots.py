"""How many exports each application streams at once in this process, and the cap on it.

One application opening exports it never reads held the event loop of the process for all of
them (issue 37); an export is now made only as fast as it is read, and this caps how many one
application may hold open (PAYORCH_MAX_CONCURRENT_EXPORTS). Counted per process: the event
loop an export costs is the process's own. One event loop, no await between the check and the
count: no lock needed.
"""

from __future__ import annotations

from collections import Counter

from payorch.errors import LimitExceeded


class ExportSlot:
    """One export's place in its application's count; released once, however the export ends."""

    def __init__(self, counts: Counter[str], application_id: str) -> None:
        self._counts = counts
        self._application_id = application_id
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._counts[self._application_id] -= 1
            if self._counts[self._application_id] <= 0:
                del self._counts[self._application_id]


class ExportSlots:
    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()

    def take(self, application_id: str, cap: int) -> ExportSlot:
        """A slot for one more export of ``application_id``, or 409 LIMIT_EXCEEDED at ``cap``."""
        current = self._counts[application_id]
        if current >= cap:
            raise LimitExceeded(
                "exports streaming",
                limit=cap,
                current=current,
                remedy="Read one to its end or close it, then retry.",
            )
        self._counts[application_id] = current + 1
        return ExportSlot(self._counts, application_id)
