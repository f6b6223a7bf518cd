"""Sending the outbox: right after the move committed (a few quick retries, in a task detached
from the answer), then by the worker's pass on a backoff schedule under a lease, until delivered
or the last step. Each read and each record is its own short transaction (``Phases``), none open
while a notification is POSTed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import orjson

from payorch.db import Phases
from payorch.runtime import Runtime
from payorch.simulator.outbox import repository
from payorch.simulator.outbox.records import Attempt, Notification, Notifier
from payorch.simulator.outbox.write import LEASE_SECONDS
from payorch.simulator.simulated import AfterCommit

log = logging.getLogger("payorch.simulator")

QUICK_RETRIES = (0.0, 0.3, 1.0)  # seconds before each immediate attempt
BACKOFF = (60, 300, 900, 3600, 21600)  # then, before each worker attempt


async def _attempt(runtime: Runtime, notifier: Notifier, notification: Notification) -> str | None:
    """One POST, signed now; None when delivered, else why not."""
    body = notification.body if notifier.seal is None else notifier.seal(runtime.cipher, notification)
    payload = orjson.dumps(body)
    headers = notifier.sign(runtime.cipher, notification, payload, runtime.clock.now())
    try:
        async with asyncio.timeout(notifier.answer_seconds):
            answer = await runtime.http.post(notification.url, content=payload, headers=headers)
    except Exception as exc:  # noqa: BLE001 - any failure is retried later
        return f"{type(exc).__name__}: {exc}"[:255]
    return None if notifier.accepts(answer.status_code) else f"HTTP {answer.status_code}"


def outcome(attempts: int, error: str | None, now: datetime) -> Attempt:
    """Delivered, given up after the last backoff step, or due again after the next one."""
    if error is None:
        return Attempt(attempts, None, status="DELIVERED")
    step = attempts - len(QUICK_RETRIES)
    if step >= len(BACKOFF):
        return Attempt(attempts, error, status="GAVE_UP")
    return Attempt(attempts, error, next_attempt_at=now + timedelta(seconds=BACKOFF[max(0, step)]))


async def _send(runtime: Runtime, phases: Phases, notifier: Notifier, notification: Notification) -> bool:
    """One attempt, then its record (one statement)."""
    error = await _attempt(runtime, notifier, notification)
    recorded = outcome(notification.attempts + 1, error, runtime.clock.now())
    async with phases.each_statement() as conn:
        await repository.record_attempt(conn, notification.id, recorded)
    if error is not None:
        log.warning("simulator notification %s not delivered: %s", notification.id, error)
    return error is None


async def deliver_now(
    runtime: Runtime, phases: Phases, notifier: Notifier, written: Sequence[Notification]
) -> None:
    """Send freshly written notifications (their transaction committed), with quick retries.
    The first attempt sends the record as written (PENDING, held from the worker by its
    ``next_attempt_at``); each retry reads it again (the worker may have taken it)."""
    for first in written:
        notification: Notification | None = first
        for pause in QUICK_RETRIES:
            if pause:
                await asyncio.sleep(pause)
                async with phases.reading() as conn:
                    notification = await repository.notification_of(conn, first.id)
            if notification is None or notification.status != "PENDING":
                break
            if await _send(runtime, phases, notifier, notification):
                break


async def send_after_commit(
    runtime: Runtime, notifier: Notifier, written: Sequence[Notification]
) -> None:
    """Start sending ``written`` in a task detached from the answer under way (payorch.detached):
    never in the answer's own background tasks, which an in-process caller waits for. Call it
    once the transaction that wrote them committed. It returns at once (async: it needs the
    running loop, and an answer's background calls a plain function in a thread)."""
    if written:
        runtime.detached.start(deliver_now(runtime, runtime.phases, notifier, list(written)))


async def deliver_due(
    runtime: Runtime, phases: Phases, notifiers: Mapping[str, Notifier], limit: int = 20
) -> int:
    """The worker's pass: claim due notifications of the ``notifiers``' providers (a lease),
    send each once. How many were sent."""
    if not notifiers:
        return 0
    now = runtime.clock.now()
    async with phases.reading() as conn:
        due = await repository.due_notifications(conn, list(notifiers), now, limit)
    sent = 0
    for notification_id, seen in due:
        async with phases.each_statement() as conn:  # a compare-and-set
            claimed = await repository.claim_notification(
                conn, notification_id, seen, now + timedelta(seconds=LEASE_SECONDS)
            )
        if claimed is None:
            continue  # another worker took it
        await _send(runtime, phases, notifiers[claimed.provider], claimed)
        sent += 1
    return sent


def after_commit(notifier: Notifier, written: Sequence[Notification]) -> AfterCommit | None:
    """``send_after_commit`` of ``written``, for a move that returns what to do once its
    transaction committed (None: nothing written)."""
    if not written:
        return None
    kept = list(written)

    async def send(runtime: Runtime, phases: Phases) -> None:
        await send_after_commit(runtime, notifier, kept)

    return send
