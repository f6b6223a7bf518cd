"""Refunds: reserve, call the provider with no transaction open, apply its answer.

Phases (each its own short transaction from the ``Phases`` the flow receives; never one open
across the provider call):

1. ``reserve``: lock the payment row, refuse a disputed payment (its dispute OPEN or LOST:
   409 PAYMENT_DISPUTED), check what is left (amount - refunded - PENDING), insert the refund
   as PENDING with ``refund.requested``. Concurrent refunds queue on the lock, so together they
   can never exceed the payment's amount; a dispute is recorded under the same lock
   (payments/disputes.observe), so a refund reserved after it sees it. The same phase reads
   what the gateway needs (``order_of``: the payment and the connector that took it).
2. The gateway sends the refund once (payments/refund_gateway.py), with no connection open.
3. ``settle``: SUCCEEDED moves the payment and the intent (REFUND_PART / REFUND_REST) and
   emits ``refund.succeeded``; FAILED releases the reserved amount and emits ``refund.failed``;
   UNKNOWN leaves it PENDING for the worker (``resolve``), which reads the provider before it
   ever sends the refund again. The intent moves through the intents service, in this phase.

HTTP answers: 201 SUCCEEDED; 202 PENDING (outcome unknown: the consumer learns the end from
``refund.succeeded`` / ``refund.failed`` or by listing the payment's refunds); 502
PROVIDER_ERROR when the provider refused (the FAILED refund stays listed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.connectors import service as connectors
from payorch.connectors.service import decrypt_credentials
from payorch.crypto import Cipher
from payorch.db import Phases
from payorch.errors import InvalidState, PaymentDisputed, ProviderError, RefundAmountExceeded
from payorch.events import service as events
from payorch.events.catalogue import (
    IntentFields,
    RefundData,
    RefundFailed,
    RefundRequested,
    RefundSucceeded,
    about,
)
from payorch.idempotency.records import IdempotentResult
from payorch.idempotency.service import Scope
from payorch.ids import new_id
from payorch.intents import service as intents
from payorch.jsontypes import JsonObject, dumps
from payorch.payments import repository
from payorch.payments.disputes import LOST, OPEN
from payorch.payments.records import Payment, Refund
from payorch.payments.refund_gateway import (
    GatewayRefundAnswer,
    GatewayRefundOutcome,
    LookupOutcome,
    RefundConnector,
    RefundGateway,
    RefundOrder,
)
from payorch.payments.repository import PENDING, SUCCEEDED
from payorch.payments.schemas import CreateRefund, refund_body
from payorch.payments.service import no_payment
from payorch.runtime import Runtime

log = logging.getLogger("payorch.refunds")

REFUNDABLE = ("AUTHORIZED", "PARTIALLY_REFUNDED")
HELD = "REQUIRES_CAPTURE"  # money held, not taken: voided, never refunded
# A dispute holding the payment's money (OPEN) or that gave it back to the buyer (LOST): a refund
# on top would pay the buyer twice. After a WON dispute what was left is refundable again.
DISPUTED = (OPEN, LOST)
DISPUTED_SINCE = "Not sent again: the payment was disputed after the refund was requested."
# After this, a PENDING refund whose request died mid-call is the worker's to resolve.
CALL_GRACE_SECONDS = 30.0
MAX_CHECK_BACKOFF_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class RefundReply:
    """The HTTP answer of a refund request: its status code and body."""

    status: int
    body: JsonObject


def gateway_of(runtime: Runtime) -> RefundGateway:
    """The runtime's gateway: the provider adapters unless the runtime was built with another."""
    return runtime.refund_gateway


async def request_refund(
    phases: Phases,
    runtime: Runtime,
    caller: Caller,
    payment_id: str,
    request: CreateRefund,
    scope: Scope | None,
) -> RefundReply | IdempotentResult:
    """The whole POST, with the Idempotency-Key handled across the phases."""
    if scope is not None:
        stored = await runtime.idempotency.begin(
            scope, lease_seconds=runtime.settings.provider_timeout_seconds + CALL_GRACE_SECONDS
        )
        if stored is not None:
            return stored
    try:
        async with phases.transaction() as conn:
            refund, existing = await reserve(conn, runtime, caller, payment_id, request, scope)
            # A retry after a crash finds the refund its key reserved: answered, not sent again.
            order = None if existing else await order_of(conn, runtime.cipher, refund)
        if order is not None:
            answer = await _send(gateway_of(runtime), order)
        async with phases.transaction() as conn:
            if order is not None:
                refund = await settle(conn, runtime, refund.id, answer)
            reply = _reply_of(refund)
            if scope is not None and reply.status < 300:
                await runtime.idempotency.complete(conn, scope, reply.status, dumps(reply.body))
        if reply.status >= 300:
            raise ProviderError(
                "The provider refused the refund.",
                {"refund_id": refund.id, "failure_reason": refund.failure_reason},
            )
    except BaseException:
        if scope is not None:
            await runtime.idempotency.release(scope)
        raise
    return reply


async def reserve(
    conn: AsyncConnection,
    runtime: Runtime,
    caller: Caller,
    payment_id: str,
    request: CreateRefund,
    scope: Scope | None,
) -> tuple[Refund, bool]:
    """Lock the payment, decide, insert the PENDING refund. Returns (refund, already existed)."""
    payment = await repository.get(conn, caller.application_id, payment_id, for_update=True)
    if payment is None:
        raise no_payment(payment_id)
    if scope is not None:
        existing = await repository.refund_by_key(conn, payment.id, scope.key)
        if existing is not None:
            return existing, True
    if payment.status == HELD:
        raise InvalidState(
            payment.status,
            "A held payment has no captured money to refund: void it to release the hold "
            f"(POST /v1/payments/{payment.id}/void), or capture it first.",
            allowed=REFUNDABLE,
        )
    if payment.status not in REFUNDABLE:
        raise InvalidState(
            payment.status, f"A {payment.status} payment cannot be refunded.", allowed=REFUNDABLE
        )
    _refuse_disputed(payment)
    # Refunds apply to captured money only (all of it for capture_method automatic).
    captured = payment.taken
    available = captured - payment.refunded_amount - await repository.pending_total(conn, payment.id)
    amount = request.amount if request.amount is not None else available
    if amount <= 0 or amount > available:
        raise RefundAmountExceeded(
            f"At most {max(available, 0)} is left to refund.",
            {"available_amount": max(available, 0)},
        )
    now = runtime.clock.now()
    refund = Refund(
        id=new_id("rfd"),
        application_id=payment.application_id,
        payment_id=payment.id,
        payment_intent_id=payment.payment_intent_id,
        status=PENDING,
        amount=amount,
        currency=payment.currency,
        reason=request.reason,
        failure_reason=None,
        provider_refund_id=None,
        idempotency_key=scope.key if scope is not None else None,
        next_check_at=now + timedelta(seconds=runtime.settings.provider_timeout_seconds + CALL_GRACE_SECONDS),
        checks=0,
        created_at=now,
        updated_at=now,
    )
    await repository.insert_refund(conn, refund)
    await _emit(
        conn,
        RefundRequested(**await _ids(conn, refund), amount=amount, currency=payment.currency),
        refund,
        now,
    )
    logged = {
        "payment_id": payment.id,
        "payment_intent_id": payment.payment_intent_id,
        "amount": amount,
        "currency": payment.currency,
        "reason": request.reason,
    }
    await record_by(conn, runtime.clock, caller, "refund.created", ("refund", refund.id), logged)
    return refund, False


def _refuse_disputed(payment: Payment) -> None:
    status = payment.dispute_status
    if status is not None and status in DISPUTED:
        raise PaymentDisputed(status, payment.dispute_kind)


async def settle(
    conn: AsyncConnection, runtime: Runtime, refund_id: str, answer: GatewayRefundAnswer
) -> Refund:
    """Apply the provider's answer. Lock order: payment, then refund, then intent."""
    refund = await repository.get_refund(conn, refund_id)
    assert refund is not None
    payment = await repository.get_any(conn, refund.payment_id, for_update=True)
    refund = await repository.get_refund(conn, refund_id, for_update=True)
    assert refund is not None and payment is not None
    if refund.status != PENDING:
        return refund  # settled meanwhile (the worker and a slow request raced): keep that
    now = runtime.clock.now()
    if answer.outcome is GatewayRefundOutcome.SUCCEEDED:
        refunded = payment.refunded_amount + refund.amount
        whole = refunded >= payment.taken
        await repository.set_refunded(
            conn,
            payment.id,
            refunded_amount=refunded,
            status="REFUNDED" if whole else "PARTIALLY_REFUNDED",
        )
        intent_status = await intents.record_refund(
            conn, runtime.clock, payment.payment_intent_id, everything_refunded=whole
        )
        await repository.mark_refund_succeeded(
            conn, refund.id, provider_refund_id=answer.provider_refund_id, at=now
        )
        await _emit(
            conn,
            RefundSucceeded(
                **await _ids(conn, refund),
                amount=refund.amount,
                currency=refund.currency,
                payment_intent_status=intent_status,
            ),
            refund,
            now,
        )
    elif answer.outcome is GatewayRefundOutcome.FAILED:
        reason = (answer.failure_reason or "The provider refused the refund.")[:255]
        # The refund's Idempotency-Key is released with it: a retry with that key runs again.
        await repository.mark_refund_failed(conn, refund.id, failure_reason=reason, at=now)
        await _emit(conn, RefundFailed(**await _ids(conn, refund), reason=reason), refund, now)
    else:
        backoff = min(5.0 * 2**refund.checks, MAX_CHECK_BACKOFF_SECONDS)
        await repository.postpone_refund_check(
            conn, refund.id, next_check_at=now + timedelta(seconds=backoff), at=now
        )
    settled = await repository.get_refund(conn, refund_id)
    assert settled is not None
    return settled


class _RefundIds(IntentFields):
    payment_id: str
    refund_id: str


async def _ids(conn: AsyncConnection, refund: Refund) -> _RefundIds:
    """What every refund event's data starts with: its intent's id, reference and metadata, its
    payment's id and its own."""
    intent = await intents.find_intent(conn, refund.payment_intent_id)
    assert intent is not None  # a refund's intent always exists (foreign keys)
    fields = about(intent)
    return {
        "payment_intent_id": fields["payment_intent_id"],
        "external_reference": fields["external_reference"],
        "metadata": fields["metadata"],
        "payment_id": refund.payment_id,
        "refund_id": refund.id,
    }


async def _emit(conn: AsyncConnection, payload: RefundData, refund: Refund, at: datetime) -> None:
    await events.emit_payload(conn, application_id=refund.application_id, payload=payload, at=at)


async def resolve(phases: Phases, runtime: Runtime, refund_id: str) -> str:
    """Worker: learn what became of a PENDING refund. Read the provider first; send again only
    if it says the refund was not applied. Returns the refund's status afterwards."""
    gateway = gateway_of(runtime)
    async with phases.transaction() as conn:
        refund = await repository.get_refund(conn, refund_id)
        if refund is None or refund.status != PENDING:
            return refund.status if refund is not None else "MISSING"
        order = await order_of(conn, runtime.cipher, refund)
        payment = await repository.get_any(conn, refund.payment_id)
        disputed = payment is not None and payment.dispute_status in DISPUTED
    try:
        found = await gateway.lookup(order)
    except Exception:
        log.exception("refund lookup failed", extra={"refund_id": refund_id})
        found = None
    if found is not None and found.outcome is LookupOutcome.APPLIED:
        answer = GatewayRefundAnswer(
            GatewayRefundOutcome.SUCCEEDED, provider_refund_id=found.provider_refund_id
        )
    elif found is not None and found.outcome is LookupOutcome.REFUSED:
        answer = GatewayRefundAnswer(GatewayRefundOutcome.FAILED, failure_reason=found.failure_reason)
    elif found is not None and found.outcome is LookupOutcome.NOT_APPLIED and disputed:
        # Disputed since it was reserved: not sent again (the reserve would refuse it now).
        answer = GatewayRefundAnswer(GatewayRefundOutcome.FAILED, failure_reason=DISPUTED_SINCE)
    elif found is not None and found.outcome is LookupOutcome.NOT_APPLIED:
        answer = await _send(gateway, order)
    else:
        answer = GatewayRefundAnswer(GatewayRefundOutcome.UNKNOWN)
    async with phases.transaction() as conn:
        settled = await settle(conn, runtime, refund_id, answer)
    return settled.status


async def list_refunds(conn: AsyncConnection, caller: Caller, payment_id: str) -> list[Refund]:
    payment = await repository.get(conn, caller.application_id, payment_id)
    if payment is None:
        raise no_payment(payment_id)
    return await repository.refunds_of(conn, payment.id)


async def order_of(conn: AsyncConnection, cipher: Cipher, refund: Refund) -> RefundOrder:
    """What the gateway needs to send ``refund``, read in the caller's phase."""
    payment = await repository.get_any(conn, refund.payment_id)
    assert payment is not None  # a foreign key
    return RefundOrder(
        refund_id=refund.id,
        amount=refund.amount,
        currency=refund.currency,
        application_id=refund.application_id,
        merchant_account_id=payment.merchant_account_id,
        payment_id=payment.id,
        payment_intent_id=payment.payment_intent_id,
        payment_amount=payment.taken,
        provider=payment.provider,
        provider_reference=payment.provider_reference,
        refunded_before=payment.refunded_amount,
        connector=await refund_connector(conn, cipher, payment.merchant_account_id, payment.provider),
    )


async def refund_connector(
    conn: AsyncConnection, cipher: Cipher, merchant_account_id: str, provider: str
) -> RefundConnector | None:
    """The merchant's configuration for ``provider``, enabled or not: a payment already made is
    refunded through the configuration that took it."""
    configured = await connectors.merchant_connectors(conn, merchant_account_id)
    connector = next((c for c in configured if c.provider == provider), None)
    if connector is None:
        return None
    return RefundConnector(
        id=connector.id,
        application_id=connector.application_id,
        provider=connector.provider,
        mode=connector.mode,
        credentials=decrypt_credentials(cipher, connector),
    )


async def _send(gateway: RefundGateway, order: RefundOrder) -> GatewayRefundAnswer:
    """One provider call; anything unexpected means we cannot know whether it applied."""
    try:
        return await gateway.refund(order)
    except Exception:
        log.exception("refund call failed", extra={"refund_id": order.refund_id})
        return GatewayRefundAnswer(GatewayRefundOutcome.UNKNOWN)


def _reply_of(refund: Refund) -> RefundReply:
    status = {SUCCEEDED: 201, PENDING: 202}.get(refund.status, 502)
    return RefundReply(status, refund_body(refund))
