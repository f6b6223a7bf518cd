"""Capture and void of a held payment (capture_method manual; docs/api.md, "Holding and
capturing"): ``capture_payment`` and ``void_payment`` are the one way to move a hold, for the
API, the dashboard, the command line and any job.

Phases, never a transaction open across the provider call:

1. ``_reserve``: lock the payment; refuse what the state or the provider's declaration does not
   allow (409 INVALID_STATE, 422 CAPTURE_AMOUNT_EXCEEDED / CAPTURE_METHOD_NOT_SUPPORTED); mark
   the action in flight (``hold_action``, read back at ``hold_action_check_at``) and record it in
   the activity log. A second action while one is in flight is refused (409): capture against
   void, or two captures with two keys, make exactly one provider call.
2. the provider's capture or void (its ``hold_calls``).
3. ``settle``: apply what the provider says of the hold (captured, released, lapsed, still held)
   to the payment and the intent, with its event; received (PENDING: a provider whose word comes
   by notification) leaves the action in flight, answered 202, until that word settles it. A
   definite refusal clears the action (502 PROVIDER_ERROR); an unknown outcome (timeout, 5xx, a
   crash before this phase) leaves it in flight for the hold job (payments/hold_job.py), which
   reads the provider and settles it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.db import Phases
from payorch.errors import CaptureAmountExceeded, InvalidState, ProviderError
from payorch.events.catalogue import PaymentCaptured, PaymentExpired, PaymentVoided, about
from payorch.idempotency.records import IdempotentResult
from payorch.idempotency.service import Scope
from payorch.intents import service as intents
from payorch.intents.states import Move
from payorch.jsontypes import JsonObject, dumps
from payorch.payments import hold_repository, repository
from payorch.payments.records import Payment
from payorch.payments.refund_gateway import RefundConnector
from payorch.payments.refunds import refund_connector
from payorch.payments.schemas import payment_body
from payorch.payments.service import no_payment
from payorch.providers.base import ConnectorContext, ProviderRejected
from payorch.providers.holds import HoldCalls, HoldRef, HoldState, HoldStatus
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime

log = logging.getLogger("payorch.holds")
CAPTURE, VOID = "capture", "void"
_ENDS = {CAPTURE: "AUTHORIZED", VOID: "VOIDED"}  # the payment's status once each is done
HELD = hold_repository.HELD
CALL_GRACE_SECONDS = 30.0  # after the provider's timeout: an unsettled action is the job's


@dataclass(frozen=True, slots=True)
class _Order:
    """What phase 1 decided: the action, its amount, and how to call the provider."""

    payment: Payment
    action: str
    amount: int | None
    calls: HoldCalls
    ctx: ConnectorContext


@dataclass(frozen=True, slots=True)
class _Ask:
    """One capture or void as the caller asked it."""

    caller: Caller
    payment_id: str
    action: str
    amount: int | None
    scope: Scope | None


async def capture_payment(
    phases: Phases, runtime: Runtime, caller: Caller, payment_id: str, amount: int | None, scope: Scope | None
) -> JsonObject | IdempotentResult:
    """Capture ``amount`` of the hold (None: all that is capturable); the payment afterwards."""
    return await _run(phases, runtime, _Ask(caller, payment_id, CAPTURE, amount, scope))


async def void_payment(
    phases: Phases, runtime: Runtime, caller: Caller, payment_id: str, scope: Scope | None
) -> JsonObject | IdempotentResult:
    """Release the hold; the payment afterwards (VOIDED, its intent CANCELLED)."""
    return await _run(phases, runtime, _Ask(caller, payment_id, VOID, None, scope))


async def _run(phases: Phases, runtime: Runtime, ask: _Ask) -> JsonObject | IdempotentResult:
    lease = runtime.settings.provider_timeout_seconds + CALL_GRACE_SECONDS
    return await runtime.idempotency.leased(ask.scope, lease, lambda: _flow(phases, runtime, ask))


async def _flow(phases: Phases, runtime: Runtime, ask: _Ask) -> JsonObject | IdempotentResult:
    action = ask.action
    async with phases.transaction() as conn:
        order = await _reserve(conn, runtime, ask.caller, ask.payment_id, action, ask.amount)
    ref = hold_ref(order.payment)
    key = f"{order.payment.id}-{action}"  # the provider's idempotency key, where it takes one
    try:
        if action == CAPTURE:
            assert order.amount is not None
            state = await order.calls.capture(order.ctx, ref, order.amount, key)
        else:
            state = await order.calls.void(order.ctx, ref, key)
    except ProviderRejected as exc:
        async with phases.transaction() as conn:
            await hold_repository.clear_action(conn, order.payment.id)
        raise ProviderError(
            f"The provider refused the {action}: {exc.reason}", {"payment_id": order.payment.id}
        ) from None
    except Exception as exc:  # unknown outcome: the hold job reads the provider and settles it
        log.warning("%s outcome unknown: %s", action, exc, extra={"payment_id": order.payment.id})
        raise ProviderError(
            f"The provider's answer to the {action} is unknown; payorch reads the provider and "
            "settles the payment (payment.captured or payment.voided tells the end).",
            {"payment_id": order.payment.id, "outcome": "unknown"},
        ) from None
    async with phases.transaction() as conn:
        settled = await settle(conn, runtime, order.payment.id, state)
        body = payment_body(settled)
        # 202: the provider received it and says its outcome later (its notification settles it:
        # payment.captured or payment.voided), unless that word came already.
        status = 202 if state.status is HoldStatus.PENDING and settled.status == HELD else 200
        if state.status is HoldStatus.PENDING and settled.status not in (HELD, _ENDS[action]):
            # Received, but another word ended the hold first (it lapsed): not this action's end.
            ended = f"The hold ended before the provider's {action}."
            raise InvalidState(settled.status, ended, allowed=[HELD])
        if ask.scope is not None:
            await runtime.idempotency.complete(conn, ask.scope, status, dumps(body))
    return body if status == 200 else IdempotentResult(status, dumps(body))


async def _reserve(
    conn: AsyncConnection,
    runtime: Runtime,
    caller: Caller,
    payment_id: str,
    action: str,
    amount: int | None,
) -> _Order:
    payment = await repository.get(conn, caller.application_id, payment_id, for_update=True)
    if payment is None:
        raise no_payment(payment_id)
    if payment.status != HELD:
        intent = await intents.find_intent(conn, payment.payment_intent_id)
        status = intent.status if intent is not None else payment.status
        raise InvalidState(status, f"Only a held payment can be {action}d.", allowed=[HELD])
    now = runtime.clock.now()
    if payment.hold_action is not None:
        raise InvalidState(
            HELD,
            f"A {payment.hold_action} of this payment is in progress; read the payment again.",
            allowed=[],
        )
    registration = registration_of(payment.provider)
    support, calls = registration.holds, registration.hold_calls
    if support is None or calls is None:
        raise InvalidState(HELD, f"The provider {payment.provider} declares no holds.", allowed=[])
    capturable = payment.amount_capturable
    if action == CAPTURE:
        amount = capturable if amount is None else amount
        if amount > capturable:
            raise CaptureAmountExceeded(
                f"At most {capturable} can be captured.", {"amount_capturable": capturable}
            )
        if amount < capturable and not support.partial_capture:
            raise CaptureAmountExceeded(
                f"The provider {payment.provider} captures only the whole hold ({capturable}).",
                {"amount_capturable": capturable},
            )
    elif not support.void:
        raise InvalidState(
            HELD, f"The provider {payment.provider} cannot release a hold on request; it lapses.", allowed=[]
        )
    check_at = now + timedelta(seconds=runtime.settings.provider_timeout_seconds + CALL_GRACE_SECONDS)
    if not await hold_repository.begin_action(conn, payment.id, action, amount, check_at):
        raise InvalidState(HELD, f"The payment changed during the {action}.", allowed=[HELD])
    connector = await refund_connector(conn, runtime.cipher, payment.merchant_account_id, payment.provider)
    if connector is None:
        raise InvalidState(HELD, f"The merchant has no connector for {payment.provider}.", allowed=[])
    logged: dict[str, object] = {"payment_intent_id": payment.payment_intent_id, "currency": payment.currency}
    if amount is not None:
        logged["amount"] = amount
    await record_by(
        conn, runtime.clock, caller, f"payment.{action}_requested", ("payment", payment.id), logged
    )
    return _Order(payment, action, amount, calls, context_of(runtime, connector))


def context_of(runtime: Runtime, connector: RefundConnector) -> ConnectorContext:
    """The provider call's context for the connector that took the payment."""
    return runtime.connector_contexts.build(
        connector_id=connector.id,
        application_id=connector.application_id,
        provider=connector.provider,
        mode=connector.mode,
        credentials=connector.credentials,
    )


def hold_ref(payment: Payment) -> HoldRef:
    return HoldRef(
        payment_intent_id=payment.payment_intent_id,
        provider_reference=payment.provider_reference,
        authorization_code=payment.authorization_code,
        amount=payment.amount,
        currency=payment.currency,
        capture_before=payment.capture_before,
    )


async def settle(conn: AsyncConnection, runtime: Runtime, payment_id: str, state: HoldState) -> Payment:
    """Apply what the provider says of the hold; the payment afterwards. A payment no longer held
    (settled meanwhile by a racing request or the job) is left as it is."""
    payment = await repository.get_any(conn, payment_id, for_update=True)
    assert payment is not None
    if payment.status != HELD or state.status is HoldStatus.PENDING:
        return payment  # settled meanwhile, or the provider's word is still to come
    now = runtime.clock.now()
    intent = await intents.find_intent(conn, payment.payment_intent_id, for_update=True)
    assert intent is not None  # a foreign key
    ids = {"payment_id": payment.id, "provider": payment.provider, "currency": payment.currency}
    if state.status is HoldStatus.CAPTURED:
        released = payment.amount - state.amount_captured
        await hold_repository.set_captured(conn, payment.id, state.amount_captured, released, now)
        captured = PaymentCaptured(
            **about(intent), **ids, amount_captured=state.amount_captured, amount_released=released
        )
        await intents.apply_move(conn, runtime.clock, intent, Move.CAPTURE, captured)
    elif state.status is HoldStatus.RELEASED:
        await hold_repository.set_ended(conn, payment.id, "VOIDED")
        voided = PaymentVoided(**about(intent), **ids, amount=payment.amount)
        await intents.apply_move(conn, runtime.clock, intent, Move.VOID, voided)
    elif state.status is HoldStatus.LAPSED:
        await hold_repository.set_ended(conn, payment.id, "EXPIRED")
        lapsed = PaymentExpired(
            **about(intent), reason="authorization_lapsed", payment_id=payment.id, provider=payment.provider
        )
        await intents.apply_move(conn, runtime.clock, intent, Move.EXPIRE, lapsed)
    else:  # still held: the action did not happen, nothing is in flight any more
        await hold_repository.clear_action(conn, payment.id)
    after = await repository.get_any(conn, payment_id)
    assert after is not None
    return after
