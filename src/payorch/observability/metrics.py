"""Every Prometheus metric of payorch, and the few calls other domains make to update them.

What to call where (all calls are cheap, synchronous and never raise on bad label values):

- Provider adapters, around every call to a provider's API::

      with provider_call(provider, "create_checkout") as call:
          response = await http.post(...)
          if response.status_code >= 500:
              call.fail("http_5xx")          # returned, but unusable

  Exceptions escaping the block are counted by kind (timeout, network, error) and re-raised.
  Where the duration is already measured (one logging helper per call site):
  ``observe_provider_call(provider, operation, seconds, error_kind_or_None)``; a failure found
  after the call was timed (an unparseable answer): ``record_provider_error(provider, operation,
  "invalid_response")``. providers/http.py does all of this for every adapter.
- Provider health (routing), when a provider starts or stops being skipped:
  ``set_provider_health(provider, HealthState.SKIPPED)`` / ``HealthState.AVAILABLE``.
- The Redis circuit (redis_client.py), when it opens or closes: ``set_redis_circuit_open(bool)``.
- The read replica (db/replica.py, wired by composition.py): ``record_replica_fallback(reason)``
  for each list read from the primary instead, ``set_replica_lag(seconds or None)`` per measure.
- Webhook delivery worker, after each attempt: ``record_delivery_attempt(outcome, seconds)`` with
  ``succeeded``, ``http_error`` (answered, not 2xx), ``timeout``, ``network_error`` or
  ``url_not_allowed`` (the address failed the URL rules at delivery time); and
  ``record_delivery_attempt("exhausted")`` in addition when the last attempt failed.
- Intents, as each move is written: ``record_intent_status(provider, status)``.
- Worker runner, after each run of a job: ``record_job_run(name, succeeded=...)``.
- Reconciliation, when it gives a checkout up to an operator:
  ``record_reconciliation_left_open(provider)``.
- Database pool waits: timed as a step takes a connection (db/held.py; observability/db_pool.py,
  outside this module because the database package imports it).
- Delivery backlog: nothing to call. /metrics reads the oldest due delivery from the database
  (observability/backlog.py, registered with ``on_scrape``), so any API replica reports the
  backlog shared by all workers. ``on_scrape(hook)`` takes more such ``async def hook(runtime)``.

HTTP request count and latency are recorded by ``MetricsMiddleware`` (observability/middleware.py).

Processes: by default each process keeps its own metrics and answers its own /metrics (one API
process per container, every container scraped). With ``PROMETHEUS_MULTIPROC_DIR`` set before
start (an empty directory, shared by the processes of one host), ``payorch serve --workers N``
and workers on that host write to it and /metrics aggregates them (docs/deployment.md).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from enum import IntEnum
from typing import Protocol

import httpx
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from payorch.clock import Clock
from payorch.config import Settings
from payorch.db import Database

log = logging.getLogger("payorch.observability")

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

HTTP_REQUESTS = Counter(
    "payorch_http_requests",
    "HTTP requests answered, by method, route template and status code.",
    ["method", "route", "status"],
)
HTTP_REQUEST_DURATION = Histogram(
    "payorch_http_request_duration_seconds",
    "Time from receiving a request to sending the end of its answer.",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
PROVIDER_CALL_DURATION = Histogram(
    "payorch_provider_call_duration_seconds",
    "Duration of calls to a provider's API, by provider and operation.",
    ["provider", "operation"],
    buckets=LATENCY_BUCKETS,
)
PROVIDER_CALL_ERRORS = Counter(
    "payorch_provider_call_errors",
    "Failed calls to a provider's API, by provider, operation and kind of failure.",
    ["provider", "operation", "kind"],
)
PROVIDER_HEALTH = Gauge(
    "payorch_provider_health_state",
    "0 = available, 1 = being skipped after repeated failures (as seen by this process, or by "
    "all replicas when PAYORCH_REDIS_URL is set).",
    ["provider"],
    multiprocess_mode="livemax",
)
REDIS_CIRCUIT = Gauge(
    "payorch_redis_circuit_state",
    "1 while this process skips Redis after a failure (rate limits and provider health kept per "
    "process, payorch/redis_client.py), else 0.",
    multiprocess_mode="livemax",
)
REPLICA_FALLBACKS = Counter(
    "payorch_replica_fallback",
    "Lists read from the primary although PAYORCH_DATABASE_REPLICA_URL is set, by reason: lag "
    "(beyond PAYORCH_REPLICA_MAX_LAG_SECONDS) or down (unreachable, unmeasurable, or it failed a "
    "read).",
    ["reason"],
)
REPLICA_LAG = Gauge(
    "payorch_replica_lag_seconds",
    "The replica's lag at this process's last measure (payorch/db/replica.py); NaN when it "
    "could not be measured.",
    multiprocess_mode="livemax",
)
WEBHOOK_DELIVERY_ATTEMPTS = Counter(
    "payorch_webhook_delivery_attempts",
    "Webhook delivery attempts by outcome: succeeded, http_error, timeout, network_error, "
    "url_not_allowed; "
    "exhausted counts deliveries whose last attempt failed.",
    ["outcome"],
)
WEBHOOK_DELIVERY_DURATION = Histogram(
    "payorch_webhook_delivery_attempt_duration_seconds",
    "Time from sending a webhook delivery attempt to its outcome, by outcome.",
    ["outcome"],
    buckets=LATENCY_BUCKETS,
)
GC_FROZEN_OBJECTS = Gauge(
    "payorch_gc_frozen_objects",
    "Objects of this process's start-up heap frozen out of garbage collection (payorch/heap.py); "
    "0 while starting.",
    multiprocess_mode="max",
)
WEBHOOK_DELIVERY_BACKLOG_AGE = Gauge(
    "payorch_webhook_delivery_backlog_age_seconds",
    "How long the oldest delivery that is due has been waiting (0 when none is due).",
    multiprocess_mode="mostrecent",
)
HOLDS_ABOUT_TO_LAPSE = Gauge(
    "payorch_holds_about_to_lapse",
    "Held payments (REQUIRES_CAPTURE) nobody captured whose capture_before is within "
    "PAYORCH_HOLD_CAPTURE_DUE_SECONDS, by provider (read from the database at scrape time).",
    ["provider"],
    multiprocess_mode="mostrecent",
)
HOLDS_PAST_DEADLINE = Gauge(
    "payorch_holds_past_deadline",
    "Held payments still REQUIRES_CAPTURE after their capture_before: the hold-deadlines job has "
    "not settled them yet (the provider unreachable, or still holding), by provider.",
    ["provider"],
    multiprocess_mode="mostrecent",
)
WEBHOOK_DELIVERY_BACKLOG = Gauge(
    "payorch_webhook_delivery_backlog",
    "Deliveries due and not yet attempted.",
    multiprocess_mode="mostrecent",
)
# Labelled worker_job, not job: Prometheus gives every series its scrape job's own "job" label.
WORKER_JOB_LAST_SUCCESS = Gauge(
    "payorch_worker_job_last_success_timestamp_seconds",
    "Unix time at which a worker job's run last ended without an error, by job (the latest of "
    "this host's workers in multiprocess mode).",
    ["worker_job"],
    multiprocess_mode="max",
)
WORKER_JOB_FAILURES = Counter(
    "payorch_worker_job_failures",
    "Runs of a worker job that raised (logged by payorch.worker; the job tries again shortly).",
    ["worker_job"],
)
PAYMENT_INTENT_STATUS = Counter(
    "payorch_payment_intent_status_changes",
    "Payment intents moved into a status (REQUIRES_ACTION, PROCESSING, AUTHORIZED, FAILED, "
    "CANCELLED, EXPIRED, PARTIALLY_REFUNDED, REFUNDED), by the provider of their checkout "
    "(none before one).",
    ["provider", "status"],
)
RECONCILIATION_LEFT_OPEN = Counter(
    "payorch_reconciliation_left_open",
    "Checkouts reconciliation stopped asking about because the provider no longer answers about "
    "them, their intent left as it is (PROCESSING) for an operator (checkouts/expiry_job.py).",
    ["provider"],
)


class HealthState(IntEnum):
    AVAILABLE = 0
    SKIPPED = 1


DELIVERY_OUTCOMES = frozenset(
    {"succeeded", "http_error", "timeout", "network_error", "url_not_allowed", "exhausted"}
)


class ProviderCall:
    """Handle given by ``provider_call``: mark a call that returned but failed."""

    __slots__ = ("kind",)

    def __init__(self) -> None:
        self.kind: str | None = None

    def fail(self, kind: str) -> None:
        """E.g. ``http_5xx``, ``http_4xx``, ``invalid_response``."""
        self.kind = kind


@contextmanager
def provider_call(provider: str, operation: str) -> Iterator[ProviderCall]:
    call = ProviderCall()
    started = time.perf_counter()
    try:
        yield call
    except BaseException as exc:
        if call.kind is None:
            call.kind = _failure_kind(exc)
        raise
    finally:
        PROVIDER_CALL_DURATION.labels(provider, operation).observe(time.perf_counter() - started)
        if call.kind is not None:
            PROVIDER_CALL_ERRORS.labels(provider, operation, call.kind).inc()


def observe_provider_call(
    provider: str, operation: str, seconds: float, error_kind: str | None = None
) -> None:
    PROVIDER_CALL_DURATION.labels(provider, operation).observe(seconds)
    if error_kind is not None:
        PROVIDER_CALL_ERRORS.labels(provider, operation, error_kind).inc()


def record_provider_error(provider: str, operation: str, kind: str) -> None:
    """A call already timed by ``observe_provider_call`` turned out unusable afterwards."""
    PROVIDER_CALL_ERRORS.labels(provider, operation, kind).inc()


def _failure_kind(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException | asyncio.TimeoutError):
        return "timeout"
    if isinstance(exc, httpx.TransportError):
        return "network"
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    return "error"


def set_provider_health(provider: str, state: HealthState) -> None:
    PROVIDER_HEALTH.labels(provider).set(int(state))


def set_redis_circuit_open(is_open: bool) -> None:
    REDIS_CIRCUIT.set(int(is_open))


def record_replica_fallback(reason: str) -> None:
    REPLICA_FALLBACKS.labels(reason).inc()


def set_replica_lag(seconds: float | None) -> None:
    REPLICA_LAG.set(math.nan if seconds is None else seconds)


def record_delivery_attempt(outcome: str, seconds: float | None = None) -> None:
    """``seconds``: how long the attempt took (not given for ``exhausted``, not an attempt)."""
    if outcome not in DELIVERY_OUTCOMES:
        log.warning("unknown webhook delivery outcome %r counted as network_error", outcome)
        outcome = "network_error"
    WEBHOOK_DELIVERY_ATTEMPTS.labels(outcome).inc()
    if seconds is not None:
        WEBHOOK_DELIVERY_DURATION.labels(outcome).observe(seconds)


def record_job_run(job: str, *, succeeded: bool) -> None:
    """After each run of a worker job (payorch/worker/runner.py)."""
    if succeeded:
        WORKER_JOB_LAST_SUCCESS.labels(job).set_to_current_time()
    else:
        WORKER_JOB_FAILURES.labels(job).inc()


def record_intent_status(provider: str | None, status: str) -> None:
    """When an intent's move is written (intents/service.py apply_move): counted before its
    transaction commits, so a move whose commit then fails is counted too (rare)."""
    PAYMENT_INTENT_STATUS.labels(provider or "none", status).inc()


def record_reconciliation_left_open(provider: str) -> None:
    RECONCILIATION_LEFT_OPEN.labels(provider).inc()


def set_delivery_backlog(age_seconds: float, count: int) -> None:
    WEBHOOK_DELIVERY_BACKLOG_AGE.set(max(0.0, age_seconds))
    WEBHOOK_DELIVERY_BACKLOG.set(max(0, count))


def set_holds_due(counts: dict[str, tuple[int, int]]) -> None:
    """By provider: (about to lapse, past their deadline); every provider given is set."""
    for provider, (due, past) in counts.items():
        HOLDS_ABOUT_TO_LAPSE.labels(provider).set(due)
        HOLDS_PAST_DEADLINE.labels(provider).set(past)


class ScrapeSource(Protocol):
    """What a scrape hook reads shared state with (the Runtime)."""

    @property
    def database(self) -> Database: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def settings(self) -> Settings: ...


ScrapeHook = Callable[[ScrapeSource], Awaitable[None]]
_scrape_hooks: list[ScrapeHook] = []
SCRAPE_HOOK_TIMEOUT_SECONDS = 2.0


def on_scrape(hook: ScrapeHook) -> ScrapeHook:
    """Register ``async def hook(runtime)`` to refresh gauges read from shared state."""
    if hook not in _scrape_hooks:
        _scrape_hooks.append(hook)
    return hook


async def run_scrape_hooks(runtime: ScrapeSource) -> None:
    for hook in list(_scrape_hooks):
        try:
            await asyncio.wait_for(hook(runtime), SCRAPE_HOOK_TIMEOUT_SECONDS)
        except Exception:
            # A slow or broken hook leaves its gauge stale; the rest of /metrics still answers.
            log.exception("metrics scrape hook %s failed", getattr(hook, "__name__", hook))


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def render() -> tuple[bytes, str]:
    """The exposition text of this process, or of every process sharing the multiprocess dir."""
    if multiprocess_dir():
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
