"""A merchant cancels a payment intent (CREATED or REQUIRES_ACTION).

Multi-phase, like a replacement (service.py), because a provider call must never run inside a
transaction:

1. tx: read the intent and its ACTIVE checkout; refuse other statuses.
2. tx: take the checkout's lease (a return or notification racing us waits for it, then finds
   the intent moved and calls nothing: provider A's token is never committed).
3. no tx: the adapter's ``cancel_checkout`` (provider B expires the preference, then both look
   for a payment).
4. tx: if the provider says the buyer paid or is paying, the provider wins: apply its answer as a
   return would and answer 409 INVALID_STATE with the new status. Otherwise close the checkout,
   move the intent to CANCELLED (payment.cancelled) and store the idempotent answer.

Errors free the Idempotency-Key (only 2xx is remembered), so a 503 can be retried with the key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from payorch.activity.service import record_by
from payorch.auth.service import Caller
from payorch.checkouts import confirm, repository
from payorch.checkouts.provider_calls import context_for, ref_of
from payorch.checkouts.records import Checkout
from payorch.checkouts.transitions import apply_result
from payorch.connectors import service as connectors
from payorch.connectors.records import Connector
from payorch.db import Phases
from payorch.errors import ConnectorUnavailable, InvalidState, ProviderError, ResourceNotFound
from payorch.events.catalogue import PaymentCancelled, about
from payorch.idempotency.records import IdempotentResult
from payorch.idempotency.service import Scope
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.intents.schemas import intent_body
from payorch.intents.states import IntentStatus, Move
from payorch.jsontypes import JsonObject, dumps
from payorch.providers.base import PaymentOutcome, PaymentResult, ProviderRejected, ProviderUnavailable
from payorch.providers.registry import get_adapter
from payorch.runtime import Runtime
from payorch.success_rates.observe import observe

log = logging.getLogger("payorch.checkouts")

CANCELLABLE = (IntentStatus.CREATED.value, IntentStatus.REQUIRES_ACTION.value)
# What the provider may answer that means the buyer already paid, holds money, or is paying: it
# wins (a HELD approval cancelled here stayed held at the provider: the conformance kit's
# tests/conformance/test_stopped.py found it).
PROVIDER_WINS = (PaymentOutcome.AUTHORIZED, PaymentOutcome.HELD, PaymentOutcome.PROCESSING)
DEFAULT_REASON = "merchant"
# A checkout replaced or closed while we waited for its lease: look again, a bounded number of times.
ROUNDS = 3


@dataclass(frozen=True, slots=True)
class _Target:
    intent: PaymentIntent
    checkout: Checkout | None
    connector: Connector | None


class _Changed(Exception):
    """The intent or its checkout changed between our reads: start again."""


def not_cancellable(status: str) -> InvalidState:
    return InvalidState(status, f"A {status} payment intent cannot be cancelled.", allowed=CANCELLABLE)


async def cancel_intent(
    runtime: Runtime,
    phases: Phases,
    caller: Caller,
    intent_id: str,
    reason: str | None,
    scope: Scope | None,
) -> JsonObject | IdempotentResult:
    """The cancelled intent's body, or the stored answer of an earlier request with the key."""
    # The key's lease outlives the slowest run: waiting for a lease, then one provider call.
    lease = 4 * runtime.settings.provider_timeout_seconds + 10
    return await runtime.idempotency.leased(
        scope, lease, lambda: _run(runtime, phases, caller, intent_id, reason or DEFAULT_REASON, scope)
    )


async def _run(
    runtime: Runtime, phases: Phases, caller: Caller, intent_id: str, reason: str, scope: Scope | None
) -> JsonObject:
    for _ in range(ROUNDS):
        target = await _read(phases, caller, intent_id)
        checkout = target.checkout
        if checkout is None:
            try:
                return await _finish(runtime, phases, caller, target, reason, scope)
            except _Changed:
                continue
        if not await confirm.lease_checkout(runtime, phases, checkout.id):
            continue  # replaced or closed meanwhile (or its holder is stuck): look again
        held = True
        try:
            result = await _stop(runtime, target)
            if result.outcome in PROVIDER_WINS:
                held = False  # apply_result's transaction releases it
                status = await _provider_wins(runtime, phases, target, result)
                raise InvalidState(
                    status,
                    f"The buyer already paid or is paying at the provider: the payment intent is "
                    f"now {status} and cannot be cancelled.",
                    allowed=CANCELLABLE,
                )
            held = False  # _finish's transaction releases it (or rolls back and we release below)
            try:
                return await _finish(runtime, phases, caller, target, reason, scope)
            except BaseException:
                held = True
                raise
        except _Changed:
            continue
        finally:
            if held:
                await confirm.release(phases, checkout.id)
    raise InvalidState(
        target.intent.status, "The payment intent's checkout kept changing; retry.", allowed=CANCELLABLE
    )


async def _read(phases: Phases, caller: Caller, intent_id: str) -> _Target:
    async with phases.reading() as conn:
        intent = await intents.find_application_intent(conn, caller.application_id, intent_id)
        if intent is None:
            raise ResourceNotFound(f"No payment intent {intent_id}.")
        if intent.status not in CANCELLABLE:
            raise not_cancellable(intent.status)
        checkout = await repository.active_for_intent(conn, intent.id)
        connector = None
        if checkout is not None:
            connector = await connectors.find_connector(conn, checkout.connector_id)
    return _Target(intent, checkout, connector)


async def _stop(runtime: Runtime, target: _Target) -> PaymentResult:
    """With the lease held and no transaction open: invalidate the checkout at the provider."""
    checkout, connector = target.checkout, target.connector
    assert checkout is not None and connector is not None
    try:
        return await get_adapter(checkout.provider).cancel_checkout(
            context_for(runtime, connector), ref_of(checkout, target.intent)
        )
    except ProviderUnavailable as exc:
        log.warning("cannot stop checkout %s to cancel: %s", checkout.id, exc.reason)
        raise ConnectorUnavailable(
            max(1, int(runtime.settings.provider_skip_seconds)),
            f"The provider {checkout.provider} cannot confirm that the checkout is unused; nothing "
            "changed, retry (with the same Idempotency-Key).",
        ) from None
    except ProviderRejected as exc:
        raise ProviderError(f"The provider refused to stop the checkout: {exc.reason}") from None


async def _provider_wins(runtime: Runtime, phases: Phases, target: _Target, result: PaymentResult) -> str:
    """Record what the provider says (an authorization as a return would) and free the lease."""
    assert target.checkout is not None
    async with phases.transaction() as conn:
        fresh = await intents.find_intent(conn, target.intent.id, for_update=True)
        current = await repository.get(conn, target.checkout.id)
        assert fresh is not None and current is not None
        after = await apply_result(conn, runtime.clock, fresh, current, result, release_lease=True)
    await observe(runtime.success_rates, fresh, after, current.provider)
    return after.status


async def _finish(
    runtime: Runtime,
    phases: Phases,
    caller: Caller,
    target: _Target,
    reason: str,
    scope: Scope | None,
) -> JsonObject:
    """Close the (stopped) checkout and move the intent to CANCELLED, in one transaction."""
    async with phases.transaction() as conn:
        fresh = await intents.find_intent(conn, target.intent.id, for_update=True)
        assert fresh is not None
        if fresh.status not in CANCELLABLE:
            raise not_cancellable(fresh.status)
        active = await repository.active_for_intent(conn, fresh.id)
        expected = target.checkout.id if target.checkout is not None else None
        if fresh.status != target.intent.status or (active.id if active else None) != expected:
            raise _Changed  # a checkout request got in first: its checkout must be stopped too
        cancelled = PaymentCancelled(**about(fresh), reason=reason)
        await intents.apply_move(conn, runtime.clock, fresh, Move.CANCEL, cancelled)
        if active is not None:
            now = runtime.clock.now()
            await repository.record_result(
                conn,
                active.id,
                payment_reference=None,
                first_check_at=None,
                closed_at=now,
                release_lease=True,
            )
        body = intent_body(await intents.read_intent(conn, caller, fresh.id))
        if scope is not None:
            await runtime.idempotency.complete(conn, scope, 200, dumps(body))
        logged = {"status": [fresh.status, IntentStatus.CANCELLED.value], "reason": reason}
        resource = ("payment_intent", fresh.id)
        await record_by(conn, runtime.clock, caller, "payment_intent.canceled", resource, logged)
    return body
