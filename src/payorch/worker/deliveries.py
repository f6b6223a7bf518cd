"""The webhook delivery job: claim due deliveries, attempt them concurrently, record the results.

- Claim: one short transaction locks due deliveries (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so
  any number of workers share the table without waiting on each other) and leases them: the
  lease end is written to ``leased_until`` and ``next_attempt_at``, so a claim whose worker died
  (SIGKILL) becomes due again by itself once the lease ends.
- Share: at most PAYORCH_WEBHOOK_MAX_IN_FLIGHT attempts in flight per process, of them at most
  ..._PER_APPLICATION for one application and ..._PER_ENDPOINT for one endpoint; an endpoint or
  application at its cap is left out of the next claim, and a claim hands its room out in turns
  between applications (then between their endpoints), so one tenant's slow or dead endpoints
  and its backlog cannot hold up another tenant's deliveries.
- Backoff: after an attempt to an endpoint times out, the endpoint gets one attempt at a time
  (its attempts would each hold a slot for the whole timeout) until one of its attempts gets a
  2xx. Kept in memory per worker process; a restarted worker starts again at the full cap.
- Attempt: no transaction is open. Each claimed delivery runs in its own task.
- Record: results are applied in batches by one writer task; each applies only if the delivery
  still carries this claim's lease token (a manual retry or an expired lease voids it).
- Wake-up: on PostgreSQL a dedicated connection LISTENs for the NOTIFY that the fan-out sends in
  the event's transaction, so an idle worker claims a new delivery milliseconds after the commit;
  it also polls every PG_POLL_SECONDS for scheduled retries and as a safety net. On SQLite a
  worker in the same process is woken directly (webhooks/wakeups.py); SQLite has no
  notifications across processes (``payorch serve`` runs the worker in its own process), so the
  worker also polls every SQLITE_POLL_SECONDS, a cheap indexed query.
- Metrics: each attempt is counted by outcome when it ends (``payorch_webhook_delivery_attempts``,
  in memory, no database), and ``exhausted`` once its exhausting result is committed.
- SIGTERM: the runner stops claiming; ``drain`` waits for the attempts in flight (each bounded by
  PAYORCH_WEBHOOK_TIMEOUT_SECONDS), records them and closes the connections.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from payorch.observability.metrics import record_delivery_attempt
from payorch.runtime import Runtime
from payorch.webhooks import repository, wakeups
from payorch.webhooks.sender import (
    NETWORK_ERROR,
    TIMEOUT,
    UNEXPECTED_STATUS,
    URL_NOT_ALLOWED,
    Outcome,
    Sender,
)

log = logging.getLogger("payorch.worker.deliveries")

ATTEMPTS_PER_SCHEDULE = 7
SQLITE_POLL_SECONDS = 0.1
PG_POLL_SECONDS = 1.0
LEASE_MARGIN_SECONDS = 10.0  # beyond the attempt timeout, for recording the result
APPLY_RETRY_SECONDS = 1.0
SECRET_CACHE_SIZE = 10_000
TIMING_OUT_MEMORY = 10_000  # endpoints remembered as timing out

# Sender's error kinds -> the metric's outcomes (observability/metrics.py DELIVERY_OUTCOMES).
_METRIC_OUTCOME = {
    UNEXPECTED_STATUS: "http_error",
    TIMEOUT: "timeout",
    NETWORK_ERROR: "network_error",
    URL_NOT_ALLOWED: "url_not_allowed",
}


def metric_outcome(outcome: Outcome) -> str:
    if outcome.succeeded:
        return "succeeded"
    return _METRIC_OUTCOME.get(outcome.error or "", "network_error")


@dataclass(frozen=True)
class Claim:
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
    token: str


@dataclass(frozen=True)
class Result:
    claim: Claim
    outcome: Outcome
    started_at: datetime


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
        self.concurrency = self.per_application = self.per_endpoint = 0  # set by _ensure
        self.claim_batch = claim_batch
        self._runtime: Runtime | None = None
        self._wake: Callable[[], None] = lambda: None
        self._sender: Sender | None = None
        self._inflight: dict[str, int] = defaultdict(int)  # per endpoint
        self._app_inflight: dict[str, int] = defaultdict(int)
        self._timing_out: set[str] = set()  # endpoints held to one attempt at a time
        self._tasks: set[asyncio.Task[None]] = set()
        self._results: list[Result] = []
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
        else:
            self._background.append(asyncio.create_task(self._listen(runtime)))

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

    def _ensure(self, runtime: Runtime) -> None:
        if self._runtime is None:
            self._runtime = runtime
            self.interval = SQLITE_POLL_SECONDS if runtime.database.is_sqlite else PG_POLL_SECONDS
            settings = runtime.settings
            concurrency, per_application, per_endpoint = self._caps
            self.concurrency = concurrency or settings.webhook_max_in_flight
            self.per_application = per_application or settings.webhook_max_in_flight_per_application
            self.per_endpoint = per_endpoint or settings.webhook_max_in_flight_per_endpoint
        if self._sender is None:
            self._sender = Sender(
                timeout_seconds=runtime.settings.webhook_timeout_seconds,
                sandbox_private=runtime.settings.sandbox_webhooks_private_allowed,
                resolver=runtime.webhook_resolver,
            )

    # ---- claim -----------------------------------------------------------------------------

    async def run_once(self, runtime: Runtime) -> int:
        self._ensure(runtime)
        room = min(self.concurrency - sum(self._inflight.values()), self.claim_batch)
        if room <= 0:
            return 0  # a finishing attempt wakes the loop
        full_endpoints = [e for e, n in self._inflight.items() if n >= self._endpoint_cap(e)]
        full_apps = [a for a, n in self._app_inflight.items() if n >= self.per_application]
        now = runtime.clock.now()
        lease_until = now + timedelta(
            seconds=runtime.settings.webhook_timeout_seconds + LEASE_MARGIN_SECONDS
        )
        # Whose claim it is (process id), for operators reading the table; random for the rest.
        token = f"{os.getpid():x}-{secrets.token_hex(8)}"
        async with runtime.database.transaction() as conn:
            candidates = await repository.due_endpoints(
                conn,
                now=now,
                limit=room,
                exclude_endpoints=full_endpoints,
                exclude_applications=full_apps,
            )
            quotas = self._share(room, [(c.id, c.application_id) for c in candidates])
            kept = await repository.lock_due(conn, now=now, quotas=quotas)
            if kept:
                await repository.lease(
                    conn, [row.id for row in kept], until=lease_until, token=token, now=now
                )
        for row in kept:
            claim = Claim(
                row.id,
                row.application_id,
                row.endpoint_id,
                row.event_id,
                row.attempts,
                row.schedule_attempts,
                row.url,
                row.secret_encrypted,
                row.environment,
                row.payload,
                token,
            )
            self._inflight[claim.endpoint_id] += 1
            self._app_inflight[claim.application_id] += 1
            task = asyncio.create_task(self._deliver(runtime, claim))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return len(kept)

    def _endpoint_cap(self, endpoint_id: str) -> int:
        return 1 if endpoint_id in self._timing_out else self.per_endpoint

    def _share(self, room: int, candidates: list[tuple[str, str]]) -> list[tuple[str, int]]:
        """Hand out ``room`` attempts one at a time, in turns over (endpoint, application)
        candidates (already ordered in turns between applications), within every cap."""
        endpoint_room = {e: self._endpoint_cap(e) - self._inflight.get(e, 0) for e, _ in candidates}
        app_room = {a: self.per_application - self._app_inflight.get(a, 0) for _, a in candidates}
        quotas: dict[str, int] = {}
        while room > 0:
            given = 0
            for endpoint_id, application_id in candidates:
                if room > 0 and endpoint_room[endpoint_id] > 0 and app_room[application_id] > 0:
                    endpoint_room[endpoint_id] -= 1
                    app_room[application_id] -= 1
                    quotas[endpoint_id] = quotas.get(endpoint_id, 0) + 1
                    room -= 1
                    given += 1
            if given == 0:
                break
        return list(quotas.items())

    # ---- attempt ---------------------------------------------------------------------------

    async def _deliver(self, runtime: Runtime, claim: Claim) -> None:
        started_at = runtime.clock.now()
        try:
            assert self._sender is not None
            outcome = await self._sender.attempt(
                url=claim.url,
                environment=claim.environment,
                secret=self._secret(runtime, claim.secret_encrypted),
                event_id=claim.event_id,
                body=claim.payload.encode(),
                timestamp=int(started_at.timestamp()),  # fresh for every attempt
            )
        except Exception:
            log.exception("delivery %s: attempt crashed", claim.id)
            outcome = Outcome(False, 0, None, None, NETWORK_ERROR)
        finally:
            _release(self._inflight, claim.endpoint_id)
            _release(self._app_inflight, claim.application_id)
            self._wake()  # runs the claim only after this task's synchronous code below
        self._note_timeouts(claim.endpoint_id, outcome)
        record_delivery_attempt(metric_outcome(outcome))  # a cancelled attempt is not counted
        self._results.append(Result(claim, outcome, started_at))
        if self._have_results is not None:
            self._have_results.set()

    def _note_timeouts(self, endpoint_id: str, outcome: Outcome) -> None:
        """A timeout holds a slot for the whole timeout: one attempt at a time for that
        endpoint until a 2xx shows it answers again (other failures leave the cap alone)."""
        if outcome.succeeded:
            self._timing_out.discard(endpoint_id)
        elif outcome.error == TIMEOUT:
            if len(self._timing_out) >= TIMING_OUT_MEMORY:
                self._timing_out.clear()  # bounded: deleted endpoints never succeed again
            self._timing_out.add(endpoint_id)

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

    async def _apply(self, batch: list[Result]) -> None:
        runtime = self._runtime
        assert runtime is not None
        schedule = runtime.settings.retry_schedule
        now = runtime.clock.now()
        async with runtime.database.transaction() as conn:
            valid = await repository.still_leased(
                conn, [(r.claim.id, r.claim.token) for r in batch]
            )
            updates: list[dict[str, Any]] = []
            attempt_rows: list[dict[str, Any]] = []
            for result in batch:
                claim, outcome = result.claim, result.outcome
                if claim.id not in valid:
                    continue  # retried by hand meanwhile, or deleted, or our lease ran out
                number = claim.attempts + 1
                in_schedule = claim.schedule_attempts + 1
                if outcome.succeeded:
                    status, next_at = repository.SUCCEEDED, None
                elif in_schedule >= ATTEMPTS_PER_SCHEDULE:
                    status, next_at = repository.EXHAUSTED, None
                else:
                    status = repository.PENDING
                    next_at = result.started_at + timedelta(seconds=schedule[in_schedule - 1])
                updates.append(
                    {
                        "b_id": claim.id,
                        "b_status": status,
                        "b_attempts": number,
                        "b_schedule_attempts": in_schedule,
                        "b_next_attempt_at": next_at,
                        "b_last_attempt_at": result.started_at,
                        "b_response_status": outcome.response_status,
                        "b_response_excerpt": outcome.response_excerpt,
                        "b_error": outcome.error,
                        "b_updated_at": now,
                    }
                )
                attempt_rows.append(
                    {
                        "delivery_id": claim.id,
                        "number": number,
                        "started_at": result.started_at,
                        "duration_ms": outcome.duration_ms,
                        "response_status": outcome.response_status,
                        "response_excerpt": outcome.response_excerpt,
                        "error": outcome.error,
                    }
                )
            await repository.apply_results(conn, updates, attempt_rows)
        # Committed: count each delivery that ended EXHAUSTED exactly once (a failed batch is
        # applied again, so counting before the commit could count twice).
        for update in updates:
            if update["b_status"] == repository.EXHAUSTED:
                record_delivery_attempt("exhausted")
        if any(u["b_status"] == repository.PENDING for u in updates):
            self._wake()  # a retry may already be due (e.g. a schedule of zeros)

    # ---- wake-ups (PostgreSQL) -------------------------------------------------------------

    async def _listen(self, runtime: Runtime) -> None:
        import asyncpg

        dsn = runtime.settings.database_url.replace("postgresql+asyncpg://", "postgresql://")
        while True:
            conn = None
            try:
                conn = await asyncpg.connect(dsn)
                closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

                def on_close(_conn: object, closed: asyncio.Future[None] = closed) -> None:
                    if not closed.done():
                        closed.set_result(None)

                conn.add_termination_listener(on_close)
                await conn.add_listener(repository.NOTIFY_CHANNEL, lambda *_args: self._wake())
                self._wake()  # catch up with what was committed while we were not listening
                await closed
                log.warning("notification connection lost; reconnecting")
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("cannot LISTEN for new deliveries; polling meanwhile")
                await asyncio.sleep(1.0)
            finally:
                if conn is not None and not conn.is_closed():
                    await conn.close()


def _release(counts: dict[str, int], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]
