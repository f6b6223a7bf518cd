"""Refunds: reserve, call the provider with no transaction open, apply its answer.

Phases (each its own short transaction; never one open across the provider call):

1. ``reserve``: lock the payment row, check what is left (amount - refunded - PENDING), insert
   the refund as PENDING with ``refund.requested``. Concurrent refunds queue on the lock, so
   together they can never exceed the payment's amount.
2. The gateway sends the refund once (payments/refund_gateway.py).
3. ``settle``: SUCCEEDED moves the payment and the intent (REFUND_PART / REFUND_REST) and
   emits ``refund.succeeded``; FAILED releases the reserved amount and emits ``refund.failed``;
   UNKNOWN leaves it PENDING for the worker (``resolve``), which reads the provider before it
   ever sends the refund again.

HTTP answers: 201 SUCCEEDED; 202 PENDING (outcome unknown: the consumer learns the end from
``refund.succeeded`` / ``refund.failed`` or by listing the payment's refunds); 502
PROVIDER_ERROR when the provider refused (the FAILED refund stays listed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.errors import InvalidState, ProviderError, RefundAmountExceeded, ResourceNotFound
from payorch.events import service as events
from payorch.events.types import EventType
from payorch.http.responses import dumps
from payorch.idempotency.service import Scope, Stored
from payorch.ids import new_id
from payorch.intents import repository as intents
from payorch.intents.service import apply_move
from payorch.intents.states import Move
from payorch.payments import repository
from payorch.payments.refund_gateway import (
    LookupOutcome,
    RefundAnswer,
    RefundGateway,
    RefundOrder,
    RefundOutcome,
)
from payorch.payments.repository import FAILED, PENDING, SUCCEEDED
from payorch.payments.schemas import CreateRefund, refund_body
from payorch.runtime import Runtime

log = logging.getLogger("payorch.refunds")

REFUNDABLE = ("AUTHORIZED", "PARTIALLY_REFUNDED")
# After this, a PENDING refund whose request died mid-call is the worker's to resolve.
CALL_GRACE_SECONDS = 30.0
MAX_CHECK_BACKOFF_SECONDS = 3600.0


@dataclass(frozen=True)
class Outcome:
    status: int
    body: dict[str, Any]


def gateway_of(runtime: Runtime) -> RefundGateway:
    """The runtime's gateway: the provider adapters unless a test injected another."""
    if runtime.refund_gateway is None:
        from payorch.payments.adapter_refund_gateway import ProviderRefundGateway

        runtime.refund_gateway = ProviderRefundGateway(runtime)
    gateway: RefundGateway = runtime.refund_gateway
    return gateway


async def request_refund(
    runtime: Runtime, caller: Caller, payment_id: str, request: CreateRefund, scope: Scope | None
) -> Outcome | Stored:
    """The whole POST, with the Idempotency-Key handled across the phases."""
    if scope is not None:
        stored = await runtime.idempotency.begin(
            scope, lease_seconds=runtime.settings.provider_timeout_seconds + CALL_GRACE_SECONDS
        )
        if stored is not None:
            return stored
    try:
        async with runtime.database.transaction() as conn:
            refund, existing = await reserve(conn, runtime, caller, payment_id, request, scope)
        if not existing:
            answer = await _send(gateway_of(runtime), await _order(runtime, refund.id))
        async with runtime.database.transaction() as conn:
            if not existing:
                refund = await settle(conn, runtime, refund.id, answer)
            # else: a retry after a crash found the refund this key reserved; answer with it
            outcome = _outcome_of(refund)
            if scope is not None and outcome.status < 300:
                await runtime.idempotency.complete(conn, scope, outcome.status, dumps(outcome.body))
        if outcome.status >= 300:
            raise ProviderError(
                "The provider refused the refund.",
                {"refund_id": refund.id, "failure_reason": refund.failure_reason},
            )
    except BaseException:
        if scope is not None:
            await runtime.idempotency.release(scope)
        raise
    return outcome


async def reserve(
    conn: AsyncConnection,
    runtime: Runtime,
    caller: Caller,
    payment_id: str,
    request: CreateRefund,
    scope: Scope | None,
) -> tuple[Row, bool]:  # type: ignore[type-arg]
    """Lock the payment, decide, insert the PENDING refund. Returns (refund, already existed)."""
    payment = await repository.get(conn, caller.application_id, payment_id, for_update=True)
    if payment is None:
        raise ResourceNotFound(f"No payment {payment_id}.")
    if scope is not None:
        existing = await repository.refund_by_key(conn, payment.id, scope.key)
        if existing is not None:
            return existing, True
    if payment.status not in REFUNDABLE:
        raise InvalidState(payment.status, f"A {payment.status} payment cannot be refunded.")
    available = (
        payment.amount - payment.refunded_amount - await repository.pending_total(conn, payment.id)
    )
    amount = request.amount if request.amount is not None else available
    if amount <= 0 or amount > available:
        raise RefundAmountExceeded(
            f"At most {max(available, 0)} is left to refund.",
            {"available_amount": max(available, 0)},
        )
    now = runtime.clock.now()
    refund_id = new_id("rfd")
    await repository.insert_refund(
        conn,
        id=refund_id,
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
        next_check_at=now
        + timedelta(seconds=runtime.settings.provider_timeout_seconds + CALL_GRACE_SECONDS),
        checks=0,
        created_at=now,
        updated_at=now,
    )
    await events.emit(
        conn,
        application_id=payment.application_id,
        type=EventType.REFUND_REQUESTED,
        payment_intent_id=payment.payment_intent_id,
        data={
            "payment_id": payment.id,
            "refund_id": refund_id,
            "amount": amount,
            "currency": payment.currency,
            "external_reference": payment.external_reference,
        },
        at=now,
    )
    refund = await repository.get_refund(conn, refund_id)
    assert refund is not None
    return refund, False


async def settle(
    conn: AsyncConnection, runtime: Runtime, refund_id: str, answer: RefundAnswer
) -> Row:  # type: ignore[type-arg]
    """Apply the provider's answer. Lock order: payment, then refund, then intent."""
    refund = await repository.get_refund(conn, refund_id)
    assert refund is not None
    payment = await repository.get_any(conn, refund.payment_id, for_update=True)
    refund = await repository.get_refund(conn, refund_id, for_update=True)
    assert refund is not None and payment is not None
    if refund.status != PENDING:
        return refund  # settled meanwhile (the worker and a slow request raced): keep that
    now = runtime.clock.now()
    if answer.outcome is RefundOutcome.SUCCEEDED:
        refunded = payment.refunded_amount + refund.amount
        whole = refunded >= payment.amount
        await repository.set_refunded(
            conn,
            payment.id,
            refunded_amount=refunded,
            status="REFUNDED" if whole else "PARTIALLY_REFUNDED",
        )
        intent = await intents.get_any(conn, payment.payment_intent_id, for_update=True)
        assert intent is not None
        intent_status = await apply_move(
            conn, runtime.clock, intent, Move.REFUND_REST if whole else Move.REFUND_PART
        )
        await repository.update_refund(
            conn,
            refund.id,
            status=SUCCEEDED,
            provider_refund_id=answer.provider_refund_id,
            next_check_at=None,
            updated_at=now,
        )
        await events.emit(
            conn,
            application_id=refund.application_id,
            type=EventType.REFUND_SUCCEEDED,
            payment_intent_id=refund.payment_intent_id,
            data={
                "payment_id": payment.id,
                "refund_id": refund.id,
                "amount": refund.amount,
                "currency": refund.currency,
                "payment_intent_status": intent_status.value,
            },
            at=now,
        )
    elif answer.outcome is RefundOutcome.FAILED:
        reason = (answer.failure_reason or "The provider refused the refund.")[:255]
        await repository.update_refund(
            conn,
            refund.id,
            status=FAILED,
            failure_reason=reason,
            idempotency_key=None,  # the key is released: a retry with it runs again
            next_check_at=None,
            updated_at=now,
        )
        await events.emit(
            conn,
            application_id=refund.application_id,
            type=EventType.REFUND_FAILED,
            payment_intent_id=refund.payment_intent_id,
            data={"payment_id": payment.id, "refund_id": refund.id, "reason": reason},
            at=now,
        )
    else:
        backoff = min(5.0 * 2**refund.checks, MAX_CHECK_BACKOFF_SECONDS)
        await repository.update_refund(
            conn, refund.id, next_check_at=now + timedelta(seconds=backoff), updated_at=now
        )
    settled = await repository.get_refund(conn, refund_id)
    assert settled is not None
    return settled


async def resolve(runtime: Runtime, refund_id: str) -> str:
    """Worker: learn what became of a PENDING refund. Read the provider first; send again only
    if it says the refund was not applied. Returns the refund's status afterwards."""
    gateway = gateway_of(runtime)
    async with runtime.database.transaction() as conn:
        refund = await repository.get_refund(conn, refund_id)
    if refund is None or refund.status != PENDING:
        return refund.status if refund is not None else "MISSING"
    order = await _order(runtime, refund_id)
    try:
        found = await gateway.lookup(order)
    except Exception:
        log.exception("refund lookup failed", extra={"refund_id": refund_id})
        found = None
    if found is not None and found.outcome is LookupOutcome.APPLIED:
        answer = RefundAnswer(RefundOutcome.SUCCEEDED, provider_refund_id=found.provider_refund_id)
    elif found is not None and found.outcome is LookupOutcome.NOT_APPLIED:
        answer = await _send(gateway, order)
    else:
        answer = RefundAnswer(RefundOutcome.UNKNOWN)
    async with runtime.database.transaction() as conn:
        settled = await settle(conn, runtime, refund_id, answer)
    return str(settled.status)


async def list_refunds(conn: AsyncConnection, caller: Caller, payment_id: str) -> dict[str, Any]:
    payment = await repository.get(conn, caller.application_id, payment_id)
    if payment is None:
        raise ResourceNotFound(f"No payment {payment_id}.")
    return {"items": [refund_body(row) for row in await repository.refunds_of(conn, payment.id)]}


async def _order(runtime: Runtime, refund_id: str) -> RefundOrder:
    async with runtime.database.transaction() as conn:
        refund = await repository.get_refund(conn, refund_id)
        assert refund is not None
        payment = await repository.get_any(conn, refund.payment_id)
        assert payment is not None
    return RefundOrder(
        refund_id=refund.id,
        amount=refund.amount,
        currency=refund.currency,
        application_id=refund.application_id,
        merchant_account_id=payment.merchant_account_id,
        payment_id=payment.id,
        payment_intent_id=payment.payment_intent_id,
        payment_amount=payment.amount,
        provider=payment.provider,
        provider_reference=payment.provider_reference,
        refunded_before=payment.refunded_amount,
    )


async def _send(gateway: RefundGateway, order: RefundOrder) -> RefundAnswer:
    """One provider call; anything unexpected means we cannot know whether it applied."""
    try:
        return await gateway.refund(order)
    except Exception:
        log.exception("refund call failed", extra={"refund_id": order.refund_id})
        return RefundAnswer(RefundOutcome.UNKNOWN)


def _outcome_of(refund: Row) -> Outcome:  # type: ignore[type-arg]
    status = {SUCCEEDED: 201, PENDING: 202}.get(refund.status, 502)
    return Outcome(status, refund_body(refund))
