"""The checkout request: choose a provider, create its checkout, move the intent.

Multi-phase, because a provider call must never run inside a transaction (SQLite has one writer
and the in-process simulator writes too; docs/checkout.md):

1. tx: read the intent, its connectors and its current checkout; decide the candidates.
2. no tx: if a checkout is being replaced, ask its provider to stop it (it must confirm that
   nothing started); then create the new checkout, failing over between candidates.
3. tx: re-check with compare-and-set (intent status, the replaced checkout still ACTIVE), record
   the checkout, move the intent (START_CHECKOUT + event) and store the idempotent answer.

Errors free the Idempotency-Key (only 2xx is remembered), so 503 CONNECTOR_UNAVAILABLE can be
retried with the same key.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.auth.service import Caller
from payorch.checkouts import confirm, repository
from payorch.checkouts.provider_calls import context_for, ref_of
from payorch.checkouts.records import Checkout, CheckoutStatus
from payorch.checkouts.schemas import CheckoutRequestBody, CheckoutResponse
from payorch.checkouts.transitions import apply_result
from payorch.clock import isoformat
from payorch.connectors import service as connectors
from payorch.connectors.records import Connector
from payorch.db import Phases
from payorch.errors import ConnectorNotConfigured, ConnectorUnavailable, InvalidState, ResourceNotFound
from payorch.events.catalogue import PaymentCheckoutStarted, about
from payorch.events.catalogue_parts import Routing
from payorch.idempotency.records import IdempotentResult
from payorch.idempotency.service import Scope
from payorch.ids import new_id
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.intents.service import apply_move
from payorch.intents.states import IntentStatus, Move
from payorch.jsontypes import dumps
from payorch.providers.base import (
    CheckoutRef,
    CheckoutRequest,
    CheckoutSession,
    PaymentOutcome,
    ProviderRejected,
    ProviderUnavailable,
)
from payorch.providers.registry import get_adapter
from payorch.routing import attempt_log
from payorch.routing import decide as routing
from payorch.routing import service as routing_versions
from payorch.routing.attempts import Attempts
from payorch.routing.health_history import HealthJournal
from payorch.routing.record import RoutingRecord
from payorch.runtime import Runtime

log = logging.getLogger("payorch.checkouts")

REPLACEABLE = (IntentStatus.CREATED.value, IntentStatus.REQUIRES_ACTION.value)
# What a provider may answer about a checkout being replaced that lets the replacement go on.
STOPPED = (PaymentOutcome.NOT_PAID, PaymentOutcome.EXPIRED)


async def intent_checkouts(conn: AsyncConnection, payment_intent_id: str) -> list[Checkout]:
    """The intent's checkouts, oldest first (the dashboard's intent page; the caller has already
    read the intent as its application's)."""
    return await repository.for_intent(conn, payment_intent_id)


def routing_facts(intent: PaymentIntent) -> routing.IntentFacts:
    """What routing reads of an intent (a checkout's, and a second chance's next provider)."""
    return routing.IntentFacts(
        intent.id,
        intent.merchant_account_id,
        intent.amount,
        intent.currency,
        intent.metadata or {},
        intent.capture_method,
    )


def return_url(runtime: Runtime, provider: str, intent_id: str) -> str:
    return f"{runtime.settings.public_url}/v1/checkout-returns/{provider}/{intent_id}"


def notification_url(runtime: Runtime, provider: str, connector_id: str) -> str:
    return f"{runtime.settings.public_url}/v1/provider-notifications/{provider}/{connector_id}"


@dataclass(frozen=True, slots=True)
class _Plan:
    intent: PaymentIntent
    facts: routing.IntentFacts
    decision: routing.Decision  # the candidates in order, and why (payorch.routing)
    current: Checkout | None  # the ACTIVE checkout being replaced
    current_connector: Connector | None


async def request_checkout(
    runtime: Runtime,
    phases: Phases,
    caller: Caller,
    intent_id: str,
    body: CheckoutRequestBody,
    scope: Scope | None,
) -> CheckoutResponse | IdempotentResult:
    """The checkout for the intent, or the stored answer of an earlier request with the same
    Idempotency-Key (the endpoint replays it as it was)."""
    # The key's lease must outlive the slowest request: waiting for a confirmation in progress,
    # stopping the current checkout, then one call per candidate provider.
    lease = 6 * runtime.settings.provider_timeout_seconds + 10
    return await runtime.idempotency.leased(
        scope, lease, lambda: _run(runtime, phases, caller, intent_id, body, scope)
    )


async def _run(
    runtime: Runtime,
    phases: Phases,
    caller: Caller,
    intent_id: str,
    body: CheckoutRequestBody,
    scope: Scope | None,
) -> CheckoutResponse:
    plan = await _plan(runtime, phases, caller, intent_id, body)
    leased = False
    try:
        if plan.current is not None:
            # Hold the current checkout's lease from "the provider confirms it is unused" until it
            # is marked REPLACED: a return racing us waits, then finds it replaced (no commit).
            if not await confirm.lease_checkout(runtime, phases, plan.current.id):
                raise InvalidState(
                    plan.intent.status, "The current checkout is being confirmed; retry.", allowed=REPLACEABLE
                )
            leased = True
            await _stop_current(runtime, phases, plan)
        connector, session, checkout_id, decided = await _create(runtime, plan)
        try:
            return await _record(runtime, phases, plan, connector, session, checkout_id, decided, scope)
        except (InvalidState, ConnectorNotConfigured):
            # Someone else moved the intent meanwhile, or the connector was removed: the checkout
            # we made must not stay payable.
            await _cancel_quietly(runtime, connector, plan.intent, checkout_id, session)
            raise
    except BaseException:
        if leased and plan.current is not None:
            await confirm.release(phases, plan.current.id)
        raise


async def _plan(
    runtime: Runtime, phases: Phases, caller: Caller, intent_id: str, body: CheckoutRequestBody
) -> _Plan:
    # Reads only: the record phase re-reads the intent FOR UPDATE and refuses if it moved.
    async with phases.reading() as conn:
        intent = await intents.find_application_intent(conn, caller.application_id, intent_id)
        if intent is None:
            raise ResourceNotFound(f"No payment intent {intent_id}.")
        if intent.status not in REPLACEABLE:
            raise InvalidState(intent.status, allowed=REPLACEABLE)
        requested = body.provider or intent.requested_provider
        merchant_connectors = await connectors.merchant_connectors(conn, intent.merchant_account_id)
        facts = routing_facts(intent)
        active = await routing_versions.active_program(conn, intent.merchant_account_id)
        decision = await routing.decide(
            facts,
            merchant_connectors,
            active,
            requested,
            runtime.success_rates,
            lambda connector: connectors.capture_methods_of(runtime.cipher, connector),
        )
        # A provider that declined this intent is never offered it again (a second chance).
        decision = attempt_log.excluding_declined(decision, intent.routing)
        current = None
        # A CREATED intent has no checkout: its first one is written in the transaction that
        # moves it to REQUIRES_ACTION (_record, which reads again under the intent's lock).
        if intent.status != IntentStatus.CREATED.value:
            current = await repository.active_for_intent(conn, intent.id)
        current_connector = None
        if current is not None:
            current_connector = next((c for c in merchant_connectors if c.id == current.connector_id), None)
            if current_connector is None:
                current_connector = await connectors.find_connector(conn, current.connector_id)
    return _Plan(intent, facts, decision, current, current_connector)


async def _stop_current(runtime: Runtime, phases: Phases, plan: _Plan) -> None:
    """A checkout is replaced only if its provider confirms nothing started."""
    assert plan.current is not None and plan.current_connector is not None
    adapter = get_adapter(plan.current.provider)
    try:
        result = await adapter.cancel_checkout(
            context_for(runtime, plan.current_connector), ref_of(plan.current, plan.intent)
        )
    except ProviderUnavailable as exc:
        log.warning("cannot stop the current checkout: %s", exc.reason)
        raise ConnectorUnavailable(
            _retry_after(runtime),
            "The current provider cannot confirm that the checkout is unused; retry.",
        ) from None
    except ProviderRejected as exc:
        raise InvalidState(
            plan.intent.status, f"The current checkout cannot be replaced: {exc.reason}", allowed=REPLACEABLE
        ) from None
    if result.outcome in STOPPED or result.outcome is PaymentOutcome.IGNORED:
        return
    # The buyer already did something there: record it and refuse the replacement.
    async with phases.transaction() as conn:
        intent = await intents.find_intent(conn, plan.intent.id, for_update=True)
        checkout = await repository.get(conn, plan.current.id)
        assert intent is not None and checkout is not None
        after = await apply_result(conn, runtime.clock, intent, checkout, result)
    raise InvalidState(
        after.status, "The buyer already started paying with the current checkout.", allowed=REPLACEABLE
    )


async def _create(runtime: Runtime, plan: _Plan) -> tuple[Connector, CheckoutSession, str, RoutingRecord]:
    """Try the candidates in order (routing's Attempts: health skips, failover)."""
    intent = plan.intent
    now = runtime.clock.now()
    expires_at = now + timedelta(seconds=runtime.settings.checkout_ttl_seconds)
    journal = HealthJournal(runtime.phases, runtime.clock)
    attempts = Attempts(plan.facts, plan.decision, runtime.provider_health, runtime.success_rates, journal)
    async for connector in attempts.admitted():
        adapter = get_adapter(connector.provider)
        checkout_id = new_id("chk")
        request = CheckoutRequest(
            payment_intent_id=intent.id,
            checkout_id=checkout_id,
            amount=intent.amount,
            currency=intent.currency,
            description=intent.description,
            external_reference=intent.external_reference,
            return_url=return_url(runtime, connector.provider, intent.id),
            expires_at=expires_at,
            notification_url=notification_url(runtime, connector.provider, connector.id)
            if adapter.supports_notifications
            else None,
            metadata=dict(intent.metadata or {}),
            capture_method=intent.capture_method,
        )
        try:
            session = await adapter.create_checkout(context_for(runtime, connector), request)
        except ProviderUnavailable as exc:
            log.warning("provider %s unavailable: %s", connector.provider, exc.reason)
            await attempts.down(connector, exc.reason)
            continue
        except ProviderRejected as exc:
            log.warning("provider %s refused the checkout: %s", connector.provider, exc.reason)
            attempts.refused(connector, exc.reason)
            continue
        return connector, session, checkout_id, await attempts.succeeded(connector)
    raise attempts.failure(_retry_after(runtime))


async def _record(
    runtime: Runtime,
    phases: Phases,
    plan: _Plan,
    connector: Connector,
    session: CheckoutSession,
    checkout_id: str,
    decided: RoutingRecord,
    scope: Scope | None,
) -> CheckoutResponse:
    clock = runtime.clock
    async with phases.transaction() as conn:
        intent = await intents.find_intent(conn, plan.intent.id, for_update=True)
        assert intent is not None
        await connectors.hold_for_checkout(conn, connector)  # a removal waits, or was first
        if intent.status != plan.intent.status:
            raise InvalidState(
                intent.status, "The payment intent changed during the checkout request.", allowed=REPLACEABLE
            )
        now = clock.now()
        if plan.current is not None:
            if not await repository.replace(conn, plan.current.id, now):
                raise InvalidState(
                    intent.status,
                    "Another checkout request replaced the checkout first.",
                    allowed=REPLACEABLE,
                )
        elif intent.status != IntentStatus.CREATED.value and (
            await repository.active_for_intent(conn, intent.id) is not None
        ):
            # A CREATED intent has no checkout (each is written here, moving it on): no read.
            raise InvalidState(intent.status, "Another checkout request won the race.", allowed=REPLACEABLE)
        provider = connector.provider
        routed = decided.as_json()
        started = PaymentCheckoutStarted(
            **about(intent), provider=provider, routing=Routing.model_validate(routed)
        )
        # The intent's record also lists every attempt so far (routing/attempt_log.py).
        logged = attempt_log.started(intent.routing, routed, checkout_id, isoformat(now))
        moved = await apply_move(
            conn, clock, intent, Move.START_CHECKOUT, started, provider=provider, routing=logged
        )
        checkout = Checkout(
            id=checkout_id,
            application_id=intent.application_id,
            payment_intent_id=intent.id,
            connector_id=connector.id,
            provider=provider,
            status=CheckoutStatus.ACTIVE,
            reference=session.provider_reference,
            payment_reference=None,
            url=session.url,
            method=session.method,
            fields=dict(session.fields),
            provider_data=dict(session.provider_data),
            expires_at=session.expires_at,
            created_at=now,
            closed_at=None,
            next_check_at=session.expires_at,  # the expiry job looks at it then
            check_attempts=0,
            lease_until=None,
        )
        await repository.insert_checkout(conn, checkout)
        answer = CheckoutResponse.of(checkout, moved.status, routed)
        if scope is not None:
            await runtime.idempotency.complete(conn, scope, 200, dumps(answer.model_dump()))
    return answer


async def _cancel_quietly(
    runtime: Runtime,
    connector: Connector,
    intent: PaymentIntent,
    checkout_id: str,
    session: CheckoutSession,
) -> None:
    ref = CheckoutRef(
        payment_intent_id=intent.id,
        checkout_id=checkout_id,
        provider_reference=session.provider_reference,
        amount=intent.amount,
        currency=intent.currency,
        provider_data=dict(session.provider_data),
    )
    try:
        await get_adapter(connector.provider).cancel_checkout(context_for(runtime, connector), ref)
    except Exception:  # noqa: BLE001 - best effort: the checkout is never recorded, so never authorizes
        log.warning("could not cancel an unrecorded checkout", exc_info=True)


def _retry_after(runtime: Runtime) -> int:
    return max(1, int(runtime.settings.provider_skip_seconds))
