"""A worker process's attempts in flight and how the next claim shares its room.

- At most ``concurrency`` attempts in flight per process, of them at most ``per_application``
  for one application and ``per_endpoint`` for one endpoint; an endpoint or application at its
  cap is left out of the next claim.
- A claim hands its room out in turns between applications (then between their endpoints), so
  one tenant's slow or dead endpoints and its backlog cannot hold up another tenant's deliveries.
- Backoff: after an attempt to an endpoint times out, the endpoint gets one attempt at a time
  (its attempts would each hold a slot for the whole timeout) until one of its attempts gets a
  2xx. Likewise after FAILING_FAST quick failures in a row (webhooks/health.py holds it in the
  database once they are recorded; this covers the moment before). Kept in memory per worker
  process; a restarted worker starts again at the full cap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from payorch.webhooks.health import BACKOFF_AFTER as FAILING_FAST
from payorch.webhooks.records import DueDelivery, DueEndpoint
from payorch.webhooks.sender import TIMEOUT, AttemptOutcome

TIMING_OUT_MEMORY = 10_000  # endpoints remembered as timing out or failing fast


class InFlight:
    def __init__(self, *, concurrency: int, per_application: int, per_endpoint: int) -> None:
        self.concurrency = concurrency
        self.per_application = per_application
        self.per_endpoint = per_endpoint
        self._endpoints: dict[str, int] = defaultdict(int)
        self._applications: dict[str, int] = defaultdict(int)
        self._timing_out: set[str] = set()  # endpoints held to one attempt at a time
        self._failures: dict[str, int] = {}  # quick failures in a row, per endpoint

    def room(self, claim_batch: int) -> int:
        return min(self.concurrency - sum(self._endpoints.values()), claim_batch)

    def full_endpoints(self) -> list[str]:
        return [e for e, n in self._endpoints.items() if n >= self._endpoint_cap(e)]

    def full_applications(self) -> list[str]:
        return [a for a, n in self._applications.items() if n >= self.per_application]

    def share(
        self,
        room: int,
        candidates: Sequence[DueEndpoint],
        elsewhere: Mapping[str, int] | None = None,
    ) -> list[tuple[str, int]]:
        """Hand out ``room`` attempts one at a time, in turns over the candidates (already
        ordered in turns between applications), within every cap: (endpoint id, count).

        ``elsewhere``: each endpoint's attempts in flight in the other worker processes, so the
        per-endpoint cap holds across processes (queue.lock_endpoints)."""
        others = elsewhere or {}
        in_flight = {c.id: self._endpoints.get(c.id, 0) + others.get(c.id, 0) for c in candidates}
        # A probed endpoint (its circuit breaker tripped) gets one attempt at a time.
        endpoint_room = {
            c.id: (1 if c.probing else self._endpoint_cap(c.id)) - in_flight[c.id]
            for c in candidates
        }
        app_room = {
            c.application_id: self.per_application - self._applications.get(c.application_id, 0)
            for c in candidates
        }
        quotas: dict[str, int] = {}
        while room > 0:
            given = 0
            for candidate in candidates:
                endpoint_id, application_id = candidate.id, candidate.application_id
                if room > 0 and endpoint_room[endpoint_id] > 0 and app_room[application_id] > 0:
                    endpoint_room[endpoint_id] -= 1
                    app_room[application_id] -= 1
                    quotas[endpoint_id] = quotas.get(endpoint_id, 0) + 1
                    room -= 1
                    given += 1
            if given == 0:
                break
        return list(quotas.items())

    def start(self, delivery: DueDelivery) -> None:
        self._endpoints[delivery.endpoint_id] += 1
        self._applications[delivery.application_id] += 1

    def finish(self, delivery: DueDelivery) -> None:
        _release(self._endpoints, delivery.endpoint_id)
        _release(self._applications, delivery.application_id)

    def note(self, endpoint_id: str, outcome: AttemptOutcome) -> None:
        """A timeout holds a slot for the whole timeout, FAILING_FAST quick failures in a row
        cost the worker as much as a full round of successes: one attempt at a time for that
        endpoint until a 2xx shows it answers again."""
        if outcome.succeeded:
            self._timing_out.discard(endpoint_id)
            self._failures.pop(endpoint_id, None)
            return
        if len(self._timing_out) + len(self._failures) >= TIMING_OUT_MEMORY:
            self._timing_out.clear()  # bounded: deleted endpoints never succeed again
            self._failures.clear()
        if outcome.error == TIMEOUT:
            self._timing_out.add(endpoint_id)
        else:
            self._failures[endpoint_id] = self._failures.get(endpoint_id, 0) + 1

    def one_at_a_time(self, endpoint_id: str) -> bool:
        return (
            endpoint_id in self._timing_out
            or self._failures.get(endpoint_id, 0) >= FAILING_FAST
        )

    def _endpoint_cap(self, endpoint_id: str) -> int:
        return 1 if self.one_at_a_time(endpoint_id) else self.per_endpoint


def _release(counts: dict[str, int], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]
