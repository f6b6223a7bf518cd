"""Holds nobody captured (docs/payments.md, "A hold nobody captured"): the worker job
``hold-deadlines``.

1. ``payment.capture_due``, PAYORCH_HOLD_CAPTURE_DUE_SECONDS before a held payment's
   capture_before: once per payment (a compare-and-set on ``capture_due_at`` in the event's
   transaction, so two workers or two passes send it once).
2. The end. At capture_before (DEADLINE_GRACE_SECONDS after) payorch asks the provider
   (``read_hold``) and applies what it says (payments/holds.py ``settle``): lapsed -> EXPIRED
   with payment.expired (reason authorization_lapsed); captured -> AUTHORIZED
   (payment.captured); released -> CANCELLED (payment.voided). A provider that cannot be
   reached, or that still holds, is asked again RECHECK_SECONDS later: payorch never guesses
   the end. With PAYORCH_HOLD_UNCAPTURED=void a hold is voided when it comes due instead
   (payments/holds.py ``void_payment``, as the service's own caller), where the provider can
   void; past capture_before it is only read.

Claims are leased (``hold_check_at``, FOR UPDATE SKIP LOCKED on PostgreSQL); every change is the
compare-and-set of ``settle``, so a racing capture, void or second worker moves it once.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from payorch.auth.service import OPERATOR, Caller
from payorch.clock import isoformat
from payorch.errors import ApiError
from payorch.events import service as events
from payorch.events.catalogue import PaymentCaptureDue, about
from payorch.intents import service as intents
from payorch.payments import hold_job, holds, lapse_repository, repository
from payorch.payments.records import Payment
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime

log = logging.getLogger("payorch.worker.holds")
BATCH = 20
RECHECK_SECONDS = 300.0  # the next ask of a provider that could not answer or still holds
# The first ask comes this long after capture_before: a provider states it to the second (C's
# unix seconds) and lets it lapse at its own moment, so asking on the dot may find it still held.
DEADLINE_GRACE_SECONDS = 5.0


class HoldDeadlines:
    name = "hold-deadlines"
    interval = 30.0

    async def run_once(self, runtime: Runtime) -> int:
        return await send_capture_due(runtime) + await end_holds(runtime)


async def send_capture_due(runtime: Runtime) -> int:
    """payment.capture_due for each hold coming due; how many were sent by this pass."""
    settings = runtime.settings
    now = runtime.clock.now()
    due_by = now + timedelta(seconds=settings.hold_capture_due_seconds)
    async with runtime.phases.reading() as conn:
        ids = await lapse_repository.notices_due(conn, due_by, BATCH)
    sent = 0
    for payment_id in ids:
        async with runtime.phases.transaction() as conn:
            if not await lapse_repository.mark_notice(conn, payment_id, now):
                continue  # another pass sent it, or the hold ended meanwhile
            payment = await repository.get_any(conn, payment_id)
            assert payment is not None and payment.capture_before is not None
            intent = await intents.find_intent(conn, payment.payment_intent_id)
            assert intent is not None  # a foreign key
            payload = PaymentCaptureDue(
                **about(intent),
                payment_id=payment.id,
                provider=payment.provider,
                amount_capturable=payment.amount_capturable,
                currency=payment.currency,
                capture_before=isoformat(payment.capture_before),
                if_uncaptured=settings.hold_uncaptured,
            )
            await events.emit_payload(conn, application_id=payment.application_id, payload=payload, at=now)
        sent += 1
    return sent


async def end_holds(runtime: Runtime) -> int:
    """Void (when so set) or read each hold whose end has come; how many were claimed."""
    now = runtime.clock.now()
    void_when_due = runtime.settings.hold_uncaptured == "void"
    async with runtime.phases.transaction() as conn:
        ids = await lapse_repository.claim_ends(
            conn,
            now,
            now - timedelta(seconds=DEADLINE_GRACE_SECONDS),
            now + timedelta(seconds=RECHECK_SECONDS),
            BATCH,
            void_when_due=void_when_due,
        )
    for payment_id in ids:
        try:
            status = await _end(runtime, payment_id, void_when_due)
        except Exception:
            log.exception("could not end a hold; asked again later", extra={"payment_id": payment_id})
            continue
        log.info("hold deadline checked", extra={"payment_id": payment_id, "status": status})
    return len(ids)


async def _end(runtime: Runtime, payment_id: str, void_when_due: bool) -> str:
    async with runtime.phases.reading() as conn:
        payment = await repository.get_any(conn, payment_id)
    if payment is None or payment.status != lapse_repository.HELD:
        return payment.status if payment is not None else "MISSING"
    if void_when_due and _voidable(runtime, payment):
        try:
            await holds.void_payment(runtime.phases, runtime, _service_caller(payment), payment.id, None)
        except ApiError as exc:  # refused, or an unknown outcome that settle-holds finishes
            log.warning("void of a due hold failed: %s", exc.message, extra={"payment_id": payment.id})
        return "VOIDED"
    return await hold_job.settle_from_provider(runtime, payment_id, keep_held=True)


def _voidable(runtime: Runtime, payment: Payment) -> bool:
    support = registration_of(payment.provider).holds
    before_deadline = payment.capture_before is not None and runtime.clock.now() < payment.capture_before
    return support is not None and support.void and before_deadline


def _service_caller(payment: Payment) -> Caller:
    # The service's own jobs act as the operator (auth/service.py); the activity log names it.
    return Caller(application_id=payment.application_id, environment="", credential_id=OPERATOR)

