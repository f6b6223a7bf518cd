"""Reconciliation runs: asked for (API, dashboard, the daily job), taken by one worker, and
carried out one connector at a time: read the provider's day (no transaction open), compare,
apply what the provider's word settles through the normal paths, record the rest for a person.

Every finding is written once per (application, provider, kind, subject) with its
``reconciliation.discrepancy`` event in the same transaction: a day reconciled twice, or by two
workers at once, says nothing twice. What is applied goes through the confirmation path (the
checkout's lease and the intent's state machine) or the disputes path, which move once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import service as activity
from payorch.activity.records import Actor, Change
from payorch.activity.service import record_by
from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.checkouts.confirm import confirm_current_checkout
from payorch.checkouts.provider_calls import context_for
from payorch.clock import Clock
from payorch.connectors import service as connectors
from payorch.errors import InvalidState, ResourceNotFound
from payorch.events import service as events
from payorch.events.catalogue import ReconciliationDiscrepancy
from payorch.ids import new_id
from payorch.jsontypes import JsonObject, json_values
from payorch.limits import refuse_at_cap
from payorch.payments import disputes, hold_job
from payorch.payments import repository as payments
from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    PaymentResult,
    ProviderCallError,
)
from payorch.providers.reconciliation import DayWindow, KnownCheckout, oldest_day
from payorch.providers.registry import get_adapter, registration_of
from payorch.reconciliation import matching, repository
from payorch.reconciliation.days import accepted_days, refuse_too_old
from payorch.reconciliation.records import (
    Finding,
    FindingAction,
    FindingKind,
    FindingStatus,
    Run,
    RunStatus,
)
from payorch.runtime import Runtime

log = logging.getLogger("payorch.reconciliation")
# How long a worker holds a run before another may take it over (a crashed worker's run).
LEASE = timedelta(minutes=30)
PAID_AT_PAYORCH = frozenset({"AUTHORIZED", "PARTIALLY_REFUNDED", "REFUNDED"})
HELD = matching.HELD
DISPUTE_FINDINGS = frozenset({FindingKind.DISPUTE_NOT_RECORDED, FindingKind.DISPUTE_MISMATCH})
# A provider whose registration declares no reader, as its row of the report says it.
NO_READER = "not reconciled: payorch has no reconciliation reader for this provider"


RUN = "reconciliation_run"  # the activity log's resource type
REQUESTED = "reconciliation.run_requested"
SYSTEM = Actor("system", "reconciliation")  # the worker's job, as the activity log names it


def _by_reconciliation(run: Run, action: str, changes: JsonObject) -> Change:
    return Change(run.application_id, SYSTEM, action, RUN, run.id, changes=changes)


def window_of(day: date, now: datetime) -> DayWindow:
    start = datetime.combine(day, time(0), UTC)
    return DayWindow(start, start + timedelta(days=1), now)


# -- asking -------------------------------------------------------------------------------------


async def request_run(
    conn: AsyncConnection, clock: Clock, caller: Caller, day: date, *, most_queued: int
) -> Run:
    """The day's run, queued unless it is queued or running already (then it is answered as
    it is: a second request starts nothing). A day no provider of the application answers about
    is 400; one more run while ``most_queued`` wait (PAYORCH_RECONCILIATION_MAX_QUEUED_RUNS) is
    409 LIMIT_EXCEEDED. A run queued or queued again is an activity entry of ``caller``'s."""
    application_id, now = caller.application_id, clock.now()
    refuse_too_old(day, await accepted_days(conn, application_id, now))
    text = day.isoformat()
    # Under the application's lock: concurrent requests take turns, so each counts the others'.
    await applications.lock_application(conn, application_id)
    run = await repository.run_of(conn, application_id, text, for_update=True)
    if run is not None and run.status in (RunStatus.QUEUED, RunStatus.RUNNING):
        return run
    await refuse_at_cap(
        conn,
        application_id,
        repository.count_waiting,
        limit=most_queued,
        what="reconciliation runs queued or running",
        remedy="Ask again once one has finished.",
    )
    if run is None:
        fresh = Run(new_id("rcr"), application_id, text, RunStatus.QUEUED, None, None, now, None, None, None)
        if await repository.insert_run_if_absent(conn, fresh):
            await record_by(conn, clock, caller, REQUESTED, (RUN, fresh.id), {"day": text})
            return fresh
        # Another request queued it meanwhile: answered as it is, its entry is that request's.
    else:
        await repository.requeue(conn, run.id, now)
        await record_by(conn, clock, caller, REQUESTED, (RUN, run.id), {"day": text})
    again = await repository.run_of(conn, application_id, text)
    assert again is not None
    return again


async def queue_daily(conn: AsyncConnection, clock: Clock) -> int:
    """Yesterday's run for every application with an enabled connector, once (not for one made
    today: yesterday is before it, a day it cannot ask for either); each one queued is an
    activity entry of the system's "reconciliation"."""
    now = clock.now()
    day = (now - timedelta(days=1)).date()
    today = datetime.combine(now.date(), time(0), UTC)
    queued = 0
    for application_id in await repository.applications_with_connectors(conn, created_before=today):
        run = Run(
            new_id("rcr"),
            application_id,
            day.isoformat(),
            RunStatus.QUEUED,
            None,
            None,
            now,
            None,
            None,
            None,
        )
        if await repository.insert_run_if_absent(conn, run):
            queued += 1
            await activity.record(conn, clock, _by_reconciliation(run, REQUESTED, {"day": run.day}))
    return queued


async def report_of(conn: AsyncConnection, caller: Caller, day: date) -> tuple[Run, list[Finding]]:
    run = await repository.run_of(conn, caller.application_id, day.isoformat())
    if run is None:
        raise ResourceNotFound(f"No reconciliation for {day.isoformat()}: ask for one with POST.")
    return run, await repository.findings_of_day(conn, caller.application_id, day.isoformat())


async def resolve(conn: AsyncConnection, clock: Clock, caller: Caller, finding_id: str, note: str) -> Finding:
    """Mark a finding a person has dealt with as RESOLVED, with their note (once)."""
    finding = await repository.finding_of(conn, caller.application_id, finding_id)
    if finding is None:
        raise ResourceNotFound(f"No finding {finding_id}.")
    if not await repository.resolve(conn, finding_id, note, clock.now()):
        raise InvalidState("RESOLVED", "This finding is resolved already.", allowed=["OPEN"])
    after = await repository.finding_of(conn, caller.application_id, finding_id)
    assert after is not None
    logged = {"day": after.day, "kind": after.kind.value, "status": ["OPEN", after.status.value]}
    await record_by(
        conn, clock, caller, "reconciliation.finding_resolved", ("reconciliation_finding", after.id), logged
    )
    return after


# -- running ------------------------------------------------------------------------------------


async def run_due(runtime: Runtime) -> int:
    """Take one due run (compare-and-set: one worker each) and carry it out; how many ran."""
    now = runtime.clock.now()
    async with runtime.phases.transaction() as conn:
        due = await repository.due_runs(conn, now, limit=5)
    for run in due:
        async with runtime.phases.transaction() as conn:
            taken = await repository.claim(conn, run.id, now, now + LEASE)
        if taken:
            await carry_out(runtime, run)
            return 1
    return 0


async def carry_out(runtime: Runtime, run: Run) -> None:
    summary: JsonObject = {}
    try:
        summary = await reconcile_day(runtime, run.application_id, date.fromisoformat(run.day))
        status, error = RunStatus.DONE, None
    except Exception as exc:  # noqa: BLE001 - the run records what stopped it; the job goes on
        log.exception("reconciliation %s of %s failed", run.day, run.application_id)
        status, error = RunStatus.FAILED, str(exc)[:255]
    async with runtime.phases.transaction() as conn:
        await repository.finish(conn, run.id, status, summary, error, runtime.clock.now())
        # The status; the summary and the error's text stay in the run (its report).
        logged: JsonObject = {"day": run.day, "status": status.value}
        await activity.record(
            conn, runtime.clock, _by_reconciliation(run, "reconciliation.run_finished", logged)
        )


async def reconcile_day(runtime: Runtime, application_id: str, day: date) -> JsonObject:
    """Compare each enabled connector's day; answer the summary per provider."""
    window = window_of(day, runtime.clock.now())
    async with runtime.phases.reading() as conn:
        found = await repository.enabled_connectors(conn, application_id)
    totals: dict[str, _Totals] = defaultdict(_Totals)
    for connector_id, provider in found:
        if registration_of(provider).reconciliation is None:
            # Nothing can read its side: listed as not reconciled, never left out of the report
            # (a missing row would read as "nothing to compare").
            totals[provider].reconciled = False
            totals[provider].unavailable = NO_READER
            continue
        await _connector_day(runtime, application_id, connector_id, provider, window, totals[provider])
    return {provider: t.as_json() for provider, t in totals.items()}


class _Totals:
    def __init__(self) -> None:
        self.matched = 0
        self.amounts: dict[str, int] = defaultdict(int)
        self.findings = 0
        self.unavailable: str | None = None
        self.reconciled = True

    def as_json(self) -> JsonObject:
        return {
            "matched": {
                "count": self.matched,
                "amounts": [{"currency": c, "amount": a} for c, a in sorted(self.amounts.items())],
            },
            "findings": self.findings,
            "unavailable": self.unavailable,
            "reconciled": self.reconciled,
        }


async def _connector_day(
    runtime: Runtime,
    application_id: str,
    connector_id: str,
    provider: str,
    window: DayWindow,
    totals: _Totals,
) -> None:
    reader = registration_of(provider).reconciliation
    assert reader is not None
    lookback = reader.lookback()
    if lookback is not None and window.start.date() < oldest_day(window.now, lookback):
        totals.unavailable = f"the provider answers only {lookback.days} days back"
        return
    async with runtime.phases.reading() as conn:
        connector = await connectors.find_connector(conn, connector_id)
        books = await repository.day_books(conn, connector_id, window.start, window.end)
    assert connector is not None
    known = [
        KnownCheckout(b.checkout_reference, b.checkout_created_at, b.capture_method == "manual", b.captured)
        for b in books
    ]
    try:
        records = await reader.read_day(context_for(runtime, connector), window, known)
    except ProviderCallError as exc:
        totals.unavailable = exc.reason
        return
    of_day = {b.payment_intent_id for b in books}
    named = sorted(
        {r.payment_intent_id for r in records if r.payment_intent_id and r.payment_intent_id not in of_day}
    )
    async with runtime.phases.reading() as conn:
        others = await repository.books_of_intents(conn, application_id, provider, named)
    others = [b for b in others if not window.start <= b.checkout_created_at < window.end]
    compared = matching.compare(records, books, others, (window.start, window.end))
    totals.matched += compared.matched
    for currency, amount in compared.matched_amounts.items():
        totals.amounts[currency] += amount
    for found in compared.discrepancies:
        action = found.action
        if action is FindingAction.APPLIED:
            action = await _apply(runtime, application_id, provider, found)
        await _record(runtime, application_id, connector_id, provider, window, found, action)
        totals.findings += 1


async def _read_status(ctx: ConnectorContext, ref: CheckoutRef) -> PaymentResult:
    return await get_adapter(ctx.provider).read_status(ctx, ref)


async def _apply(
    runtime: Runtime, application_id: str, provider: str, found: matching.Discrepancy
) -> FindingAction:
    """Apply the provider's final word as a return or notification would; FLAGGED when it did
    not take (the provider's answer did not confirm it for the checkout, or was unavailable; a
    dispute read the disputes path found older than what payorch holds)."""
    assert found.payment_intent_id is not None
    try:
        held = found.payorch_values.get("payment_status") == HELD
        if found.kind is FindingKind.APPROVED_NOT_RECORDED and held:
            return await _settle_hold(runtime, found.payment_intent_id)
        if found.kind is FindingKind.APPROVED_NOT_RECORDED:
            after = await confirm_current_checkout(
                runtime,
                runtime.phases,
                found.payment_intent_id,
                _read_status,
                statuses=tuple(matching.OPEN_INTENT),
                provider=provider,
            )
            moved = after is not None and after.status in PAID_AT_PAYORCH
            return FindingAction.APPLIED if moved else FindingAction.FLAGGED
        if found.kind in DISPUTE_FINDINGS and found.dispute is not None:
            # The provider's read, with its place in the provider's order: the disputes path
            # applies it only if it is newer than what payorch holds (never an older read).
            async with runtime.phases.transaction() as conn:
                payment = await disputes.observe(
                    conn,
                    runtime.clock,
                    provider=provider,
                    provider_reference=found.subject,
                    application_id=application_id,
                    seen=found.dispute,
                )
            there = found.provider_values.get("dispute")
            moved = payment is not None and payment.dispute_status == there
            return FindingAction.APPLIED if moved else FindingAction.FLAGGED
    except ProviderCallError as exc:
        log.warning("reconciliation could not apply %s for %s: %s", found.kind, found.subject, exc.reason)
    return FindingAction.FLAGGED


async def _settle_hold(runtime: Runtime, payment_intent_id: str) -> FindingAction:
    """Taken at the provider, held at payorch: the hold read there and applied (the settle-holds
    job's path: the provider's word, captured or released, wins)."""
    async with runtime.phases.reading() as conn:
        payment = await payments.for_intent(conn, payment_intent_id)
    if payment is None:
        return FindingAction.FLAGGED
    status = await hold_job.settle_from_provider(runtime, payment.id)
    return FindingAction.APPLIED if status in PAID_AT_PAYORCH else FindingAction.FLAGGED


async def _record(
    runtime: Runtime,
    application_id: str,
    connector_id: str,
    provider: str,
    window: DayWindow,
    found: matching.Discrepancy,
    action: FindingAction,
) -> None:
    now = runtime.clock.now()
    finding = Finding(
        id=new_id("rcf"),
        application_id=application_id,
        day=window.start.date().isoformat(),
        provider=provider,
        connector_id=connector_id,
        kind=found.kind,
        subject=found.subject,
        payment_intent_id=found.payment_intent_id,
        action=action,
        status=FindingStatus.RESOLVED if action is FindingAction.APPLIED else FindingStatus.OPEN,
        payorch_values=found.payorch_values,
        provider_values=found.provider_values,
        note="applied by reconciliation" if action is FindingAction.APPLIED else None,
        resolved_at=now if action is FindingAction.APPLIED else None,
        created_at=now,
    )
    async with runtime.phases.transaction() as conn:
        if await repository.insert_finding_if_absent(conn, finding):
            await events.emit_payload(
                conn, application_id=application_id, payload=finding_event(finding), at=now
            )


def finding_event(finding: Finding) -> ReconciliationDiscrepancy:
    return ReconciliationDiscrepancy(
        payment_intent_id=finding.payment_intent_id,
        finding_id=finding.id,
        date=finding.day,
        provider=finding.provider,
        kind=finding.kind,
        action=finding.action,
        provider_reference=finding.subject,
        payorch=json_values(finding.payorch_values),
        at_provider=json_values(finding.provider_values),
    )
