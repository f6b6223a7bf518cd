"""The webhook delivery engine: claim due deliveries, attempt them concurrently, record the results.

- Claim: one short transaction locks due deliveries (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so
  any number of workers share the table without waiting on each other) and leases them: the
  lease end is written to ``leased_until`` and ``next_attempt_at``, so a claim whose worker died
  (SIGKILL) becomes due again by itself once the lease ends (SQL in webhooks/queue.py).
- Share: PAYORCH_WEBHOOK_MAX_IN_FLIGHT attempts per process, capped per application and per
  endpoint, handed out in turns between applications (webhooks/claims.py). An attempt to an
  endpoint held to one attempt at a time (breaker, backoff, timeouts) stays counted until its
  result is recorded, so the next one is claimed only once the hold that result sets is known.
- Attempt: no transaction is open. Each claimed delivery runs in its own task.
- Record: results are applied in batches by one writer task; each applies only if the delivery
  still carries this claim's lease token (a manual retry or an expired lease voids it). What a
  result makes of the delivery: webhooks/retry_policy.py.
- Wake-up: on PostgreSQL a dedicated connection LISTENs for the NOTIFY that the fan-out sends in
  the event's transaction; it also polls every PG_POLL_SECONDS for scheduled retries and as a
  safety net. On SQLite a worker in the same process is woken directly; SQLite has no
  notifications across processes (``payorch serve`` runs the worker in its own process), so the
  worker also polls every SQLITE_POLL_SECONDS, a cheap indexed query (webhooks/wakeups.py).
- Metrics: each attempt is counted by outcome when it ends (``payorch_webhook_delivery_attempts``,
  in memory, no database), and ``exhausted`` once its exhausting result is committed.
- SIGTERM: the runner stops claiming; ``drain`` waits for the attempts in flight (each bounded by
  PAYORCH_WEBHOOK_TIMEOUT_SECONDS), records them and closes the connections.
- Transactions: the job takes ``Phases`` from the runtime once (``_ensure``, its entry point) and
  opens each phase (claim, record) with it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from payorch.db import Phases
from payorch.observability import tracing
from payorch.observability.metrics import record_delivery_attempt
from payorch.runtime import Runtime
from payorch.webhooks import queue, wakeups
from payorch.webhooks.claims import InFlight
from payorch.webhooks.endpoint_health import disable_failing_endpoints
from payorch.webhooks.records import EXHAUSTED, PENDING, SUCCEEDED, DueDelivery, RecordedAttempt
from payorch.webhooks.retry_policy import next_attempt
from payorch.webhooks.sender import (
    NETWORK_ERROR,
    TIMEOUT,
    UNEXPECTED_STATUS,
    URL_NOT_ALLOWED,
    AttemptOutcome,
    Sender,
)

log = logging.getLogger("payorch.worker.deliveries")  # the name operators know (deployment.md)

SQLITE_POLL_SECONDS = 0.1
PG_POLL_SECONDS = 1.0
LEASE_MARGIN_SECONDS = 10.0  # beyond the attempt timeout, for recording the result
APPLY_RETRY_SECONDS = 1.0
SECRET_CACHE_SIZE = 10_000

# Sender's error kinds -> the metric's outcomes (observability/metrics.py DELIVERY_OUTCOMES).
_METRIC_OUTCOME = {
    UNEXPECTED_STATUS: "http_error",
    TIMEOUT: "timeout",
    NETWORK_ERROR: "network_error",
    URL_NOT_ALLOWED: "url_not_allowed",
}


def metric_outcome(outcome: AttemptOutcome) -> str:
    if outcome.succeeded:
        return "succeeded"
    return _METRIC_OUTCOME.get(outcome.error or "", "network_error")


def _log_failed_attempt(result: RecordedAttempt, endpoint_id: str) -> None:
    """One warning per failed attempt: ids, number and outcome; never the URL (it may carry a
    token), the secret, the body or the receiver's answer."""
    attempt = result.attempt
    exhausted = result.status == EXHAUSTED
    log.warning(
        "webhook delivery %s: attempt %d failed (%s)%s",
        attempt.delivery_id,
        attempt.number,
        attempt.response_status or attempt.error,
        "; no attempts left (EXHAUSTED)" if exhausted else "",
        extra={
            "delivery_id": attempt.delivery_id,
            "endpoint_id": endpoint_id,
            "attempt": attempt.number,
            "outcome": attempt.error or "unexpected_status",
            "response_status": attempt.response_status,
            "duration_ms": attempt.duration_ms,
            "delivery_status": result.status,
            "next_attempt_at": result.next_attempt_at,
        },
    )


@dataclass(frozen=True, slots=True)
class Claim:
    delivery: DueDelivery
    token: str  # the lease token its result must still match
    # Its endpoint gets one attempt at a time (breaker or backoff): the attempt counts as in
    # flight until its result is recorded, so the next one sees the hold that result sets.
    probe: bool = False


@dataclass(frozen=True, slots=True)
class AttemptResult:
    claim: Claim
    outcome: AttemptOutcome
    started_at: datetime


@dataclass(frozen=True, slots=True)
class _Process:
    """What the job takes from the runtime once, at its entry point."""

    runtime: Runtime
    phases: Phases
    in_flight: InFlight


class WebhookDeliveries:
    name = "webhook-deliveries"

    def __init__(
        self,
        *,
        concurrency: int | None = None,
        per_application: int | None = None,
        per_endpoint: int | None = None,
        claim_batch: int = 128,
    ) -> None:
        """Caps left at None come from the settings (PAYORCH_WEBHOOK_MAX_IN_FLIGHT...)."""
        self.interval = PG_POLL_SECONDS
        self._caps = (concurrency, per_application, per_endpoint)
        self.claim_batch = claim_batch
        self._process: _Process | None = None
        # This job's lease tokens start with it: leases of other jobs are the others' attempts.
        self._token_prefix = f"{os.getpid():x}-{secrets.token_hex(2)}"
        self._wake: Callable[[], None] = lambda: None
        self._sender: Sender | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._results: list[AttemptResult] = []
        self._have_results: asyncio.Event | None = None
        self._background: list[asyncio.Task[None]] = []
        self._apply_lock = asyncio.Lock()  # one writer of results at a time
        self._secrets: dict[str, str] = {}  # ciphertext -> secret: decrypt once per endpoint

    # ---- life cycle (called by worker.runner.Worker) ---------------------------------------

    async def start(self, runtime: Runtime, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._ensure(runtime)
        self._background.append(asyncio.create_task(self._apply_loop()))
        if runtime.database.is_sqlite:
            wakeups.subscribe(wake)
        elif not runtime.database.transaction_pooling:  # a pooler's LISTEN hears nothing: polls
            listen = wakeups.listen(runtime.settings.database_url, lambda: self._wake())
            self._background.append(asyncio.create_task(listen))

    async def drain(self) -> None:
        """Finish the attempts in flight, record them, and release the connections."""
        wakeups.unsubscribe(self._wake)
        await self.settle()
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        self._background.clear()
        if self._sender is not None:
            await self._sender.aclose()
            self._sender = None

    async def settle(self) -> None:
        """Wait for every attempt in flight and record every result (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        async with self._apply_lock:  # waits for a batch the writer task is applying
            while self._results:
                await self._apply_pending()

    async def run_until_idle(self, runtime: Runtime) -> int:
        """Claim and attempt until nothing is due (tests drive the job with a FrozenClock)."""
        total = 0
        while True:
            claimed = await self.run_once(runtime)
            await self.settle()
            total += claimed
            if claimed == 0:
                return total

    def _ensure(self, runtime: Runtime) -> tuple[_Process, Sender]:
        if self._process is None:
            self.interval = SQLITE_POLL_SECONDS if runtime.database.is_sqlite else PG_POLL_SECONDS
            settings = runtime.settings
            concurrency, per_application, per_endpoint = self._caps
            in_flight = InFlight(
                concurrency=concurrency or settings.webhook_max_in_flight,
                per_application=per_application
                or settings.webhook_max_in_flight_per_application,
                per_endpoint=per_endpoint or settings.webhook_max_in_flight_per_endpoint,
            )
            self._process = _Process(runtime, runtime.phases, in_flight)
        if self._sender is None:
            self._sender = Sender(
                timeout_seconds=runtime.settings.webhook_timeout_seconds,
                sandbox_private=runtime.settings.sandbox_webhooks_private_allowed,
                resolver=runtime.webhook_resolver,
            )
        return self._process, self._sender

    # ---- claim -----------------------------------------------------------------------------

    async def run_once(self, runtime: Runtime) -> int:
        process, sender = self._ensure(runtime)
        in_flight = process.in_flight
        room = in_flight.room(self.claim_batch)
        if room <= 0:
            return 0  # a finishing attempt wakes the loop
        full_endpoints = in_flight.full_endpoints()
        full_apps = in_flight.full_applications()
        now = runtime.clock.now()
        lease_until = now + timedelta(
            seconds=runtime.settings.webhook_timeout_seconds + LEASE_MARGIN_SECONDS
        )
        # Whose claim it is (process id), for operators reading the table; random for the rest.
        token = f"{self._token_prefix}{secrets.token_hex(6)}"
        async with process.phases.transaction() as conn:
            candidates = await queue.due_endpoints(
                conn,
                now=now,
                limit=room,
                exclude_endpoints=full_endpoints,
                exclude_applications=full_apps,
            )
            locked = await queue.lock_endpoints(
                conn, [c.id for c in candidates], now=now, token_prefix=self._token_prefix
            )
            candidates = [c for c in candidates if c.id not in locked.held]
            quotas = in_flight.share(room, candidates, locked.in_flight_elsewhere)
            ordered = frozenset(c.id for c in candidates if c.ordered)
            probing = frozenset(c.id for c in candidates if c.probing)
            kept = await queue.lock_due(conn, now=now, quotas=quotas, ordered=ordered)
            if kept:
                ids = [delivery.id for delivery in kept]
                await queue.lease(conn, ids, until=lease_until, token=token, now=now)
        for delivery in kept:
            in_flight.start(delivery)
            endpoint_id = delivery.endpoint_id
            claim = Claim(
                delivery, token, endpoint_id in probing or in_flight.one_at_a_time(endpoint_id)
            )
            task = asyncio.create_task(self._deliver(process, sender, claim))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return len(kept)

    # ---- attempt ---------------------------------------------------------------------------

    async def _deliver(self, process: _Process, sender: Sender, claim: Claim) -> None:
        delivery = claim.delivery
        started_at = process.runtime.clock.now()
        try:
            if tracing.enabled:
                outcome = await self._traced_attempt(process, sender, delivery, started_at)
            else:
                outcome = await self._attempt(process, sender, delivery, started_at, None)
        except Exception:
            log.exception("delivery %s: attempt crashed", delivery.id)
            outcome = AttemptOutcome(False, 0, None, None, NETWORK_ERROR)
        except asyncio.CancelledError:
            if claim.probe:  # no result will be recorded
                process.in_flight.finish(delivery)
            raise
        finally:
            if not claim.probe:
                process.in_flight.finish(delivery)
            self._wake()  # runs the claim only after this task's synchronous code below
        process.in_flight.note(delivery.endpoint_id, outcome)
        record_delivery_attempt(metric_outcome(outcome), outcome.duration_ms / 1000)  # not if cancelled
        self._results.append(AttemptResult(claim, outcome, started_at))
        if self._have_results is not None:
            self._have_results.set()

    async def _attempt(
        self,
        process: _Process,
        sender: Sender,
        delivery: DueDelivery,
        started_at: datetime,
        traceparent: str | None,
    ) -> AttemptOutcome:
        return await sender.attempt(
            url=delivery.url,
            environment=delivery.environment,
            secret=tuple(self._secret(process.runtime, key) for key in delivery.signing_keys),
            event_id=delivery.event_id,
            body=delivery.payload.encode(),
            timestamp=int(started_at.timestamp()),  # fresh for every attempt
            traceparent=traceparent,
        )

    async def _traced_attempt(
        self, process: _Process, sender: Sender, delivery: DueDelivery, started_at: datetime
    ) -> AttemptOutcome:
        """The attempt as a span under its event's trace; the receiver gets that span's
        ``traceparent`` (observability/tracing.py)."""
        with tracing.webhook_attempt(
            traceparent=delivery.traceparent,
            endpoint_id=delivery.endpoint_id,
            delivery_id=delivery.id,
            event_id=delivery.event_id,
            number=delivery.attempts + 1,
        ) as span:
            outcome = await self._attempt(
                process, sender, delivery, started_at, tracing.traceparent_of(span)
            )
            ended = (metric_outcome(outcome), outcome.duration_ms, outcome.response_status)
            tracing.webhook_attempt_ended(span, *ended, succeeded=outcome.succeeded)
            return outcome

    def _secret(self, runtime: Runtime, encrypted: str) -> str:
        secret = self._secrets.get(encrypted)
        if secret is None:
            if len(self._secrets) >= SECRET_CACHE_SIZE:
                self._secrets.clear()
            secret = self._secrets[encrypted] = runtime.cipher.decrypt(encrypted)
        return secret

    # ---- record ----------------------------------------------------------------------------

    async def _apply_loop(self) -> None:
        self._have_results = asyncio.Event()
        while True:
            await self._have_results.wait()
            self._have_results.clear()
            try:
                async with self._apply_lock:
                    await self._apply_pending()
            except Exception:
                log.exception("recording delivery results failed; trying again")
                await asyncio.sleep(APPLY_RETRY_SECONDS)
                self._have_results.set()

    async def _apply_pending(self) -> None:
        batch, self._results = self._results, []
        if not batch:
            return
        try:
            await self._apply(batch)
        except BaseException:
            self._results[:0] = batch  # keep them for the next try (their leases still hold)
            raise

    async def _apply(self, batch: list[AttemptResult]) -> None:
        process = self._process
        assert process is not None  # results exist only after run_once
        schedule = process.runtime.settings.retry_schedule
        now = process.runtime.clock.now()
        async with process.phases.transaction() as conn:
            valid = await queue.still_leased(
                conn, [(r.claim.delivery.id, r.claim.token) for r in batch]
            )
            # Not valid: deleted, or our lease ran out. A retry asked for during the attempt
            # restarted the schedule under our lease: this attempt is its first.
            recorded = [
                next_attempt(
                    replace(r.claim.delivery, schedule_attempts=valid[r.claim.delivery.id]),
                    r.outcome,
                    started_at=r.started_at,
                    schedule=schedule,
                )
                for r in batch
                if r.claim.delivery.id in valid
            ]
            await queue.apply_results(conn, recorded, now=now)
            endpoints = {r.claim.delivery.id: r.claim.delivery.endpoint_id for r in batch}
            streak_open = {r.claim.delivery.endpoint_id for r in batch if r.claim.delivery.streak_open}
            await disable_failing_endpoints(
                conn, process.runtime, endpoints, recorded, now=now, streak_open=streak_open
            )
        probes = [r.claim.delivery for r in batch if r.claim.probe]
        for delivery in probes:  # recorded: the endpoint's next attempt may be claimed
            process.in_flight.finish(delivery)
        # Committed: count each delivery that ended EXHAUSTED exactly once (a failed batch is
        # applied again, so counting before the commit could count twice), and log each failed
        # attempt once, for the same reason.
        for result in recorded:
            if result.status == EXHAUSTED:
                record_delivery_attempt("exhausted")
            if result.status != SUCCEEDED:
                _log_failed_attempt(result, endpoints[result.attempt.delivery_id])
        if probes or any(result.status == PENDING for result in recorded):
            self._wake()  # a retry may already be due (e.g. a schedule of zeros)

