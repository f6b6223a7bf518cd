"""Apply what a provider said about a checkout to its intent: one place for returns,
notifications, expiry and reconciliation, so they can never disagree.

Runs inside the caller's transaction; the intent row must have been read in that transaction
(FOR UPDATE on PostgreSQL) and the checkout must still be ACTIVE (checked here): a replaced
checkout never moves its intent.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.checkouts import repository, second_chance
from payorch.checkouts.records import Checkout, CheckoutStatus
from payorch.clock import Clock, isoformat
from payorch.events.catalogue import (
    PaymentAttemptFailed,
    PaymentAuthorized,
    PaymentCancelled,
    PaymentExpired,
    PaymentFailed,
    PaymentProcessing,
    about,
)
from payorch.events.catalogue_parts import LastPaymentError
from payorch.ids import new_id
from payorch.intents.records import PaymentIntent
from payorch.intents.service import apply_move
from payorch.intents.states import IntentStatus, Move, allowed
from payorch.payments import service as payments
from payorch.providers.base import PaymentOutcome, PaymentResult
from payorch.providers.payment_errors import as_json, payment_error
from payorch.providers.registry import registration_of
from payorch.routing import attempt_log

# Reconciliation of PROCESSING intents: seconds before each read, then the last one forever.
RECONCILE_BACKOFF = (15, 30, 60, 120, 300, 600, 1800, 3600)


def reconcile_delay(attempts: int) -> timedelta:
    return timedelta(seconds=RECONCILE_BACKOFF[min(attempts, len(RECONCILE_BACKOFF) - 1)])


async def apply_result(
    conn: AsyncConnection,
    clock: Clock,
    intent: PaymentIntent,
    checkout: Checkout,
    result: PaymentResult,
    *,
    release_lease: bool = False,
) -> PaymentIntent:
    """Move ``intent`` as ``result`` says, if that move is allowed now; answer the intent as it
    is afterwards. ``release_lease``: also free the checkout's lease (in the statement recording
    the result)."""
    status = IntentStatus(intent.status)
    if checkout.status is not CheckoutStatus.ACTIVE or checkout.payment_intent_id != intent.id:
        if release_lease:
            await repository.release_lease(conn, checkout.id)
        return intent
    now = clock.now()
    provider = checkout.provider
    first_check_at = None
    outcome = result.outcome
    after = intent
    # Why the payment did not go through, in the provider's own terms (its registration maps
    # them): stored with a move to FAILED, CANCELLED or EXPIRED and sent in its event.
    found = payment_error(registration_of(provider).payment_errors, result)
    error = None if found is None else as_json(found, provider=provider, at=now)
    why = None if error is None else LastPaymentError.model_validate(error)
    offered = False
    if outcome is PaymentOutcome.AUTHORIZED and allowed(status, Move.AUTHORIZE):
        after = await _authorize(conn, clock, intent, checkout, result, now)
    elif outcome is PaymentOutcome.HELD and allowed(status, Move.HOLD):
        after = await _authorize(conn, clock, intent, checkout, result, now, held=True)
    elif outcome is PaymentOutcome.PROCESSING:
        if allowed(status, Move.PROCESS):
            # What it waits for, in the adapter's words from the provider's answer (the page shows it).
            waiting = result.reason or "The provider has the payment in process."
            processing = PaymentProcessing(**about(intent), provider=provider, reason=waiting)
            after = await apply_move(conn, clock, intent, Move.PROCESS, processing)
            first_check_at = now + reconcile_delay(0)
    elif outcome is PaymentOutcome.FAILED and allowed(status, Move.FAIL):
        offer = None
        if allowed(status, Move.DECLINE_ATTEMPT):  # not a payment left processing: the buyer has gone
            offer = await second_chance.offer_for(conn, intent, provider, found)
        retryable = found is not None and found.retryable
        routed = attempt_log.ended(
            intent.routing, error or {}, retried=offer is not None, retryable=retryable
        )
        if offer is not None and why is not None:
            attempt_failed = PaymentAttemptFailed(
                **about(intent),
                provider=provider,
                attempt=offer.attempt,
                max_attempts=offer.max_attempts,
                next_provider=offer.next_provider,
                last_payment_error=why,
            )
            after = await apply_move(
                conn,
                clock,
                intent,
                Move.DECLINE_ATTEMPT,
                attempt_failed,
                routing=routed,
                last_payment_error=error,
            )
            offered = True  # the checkout is closed: the next one is the buyer's to start
        else:
            reason = result.reason or "The provider rejected the payment."
            failed = PaymentFailed(**about(intent), provider=provider, reason=reason, last_payment_error=why)
            after = await apply_move(
                conn, clock, intent, Move.FAIL, failed, routing=routed, last_payment_error=error
            )
    elif outcome is PaymentOutcome.CANCELLED and allowed(status, Move.CANCEL):
        reason = result.reason or "The buyer cancelled the payment."
        cancelled = PaymentCancelled(**about(intent), reason=reason, last_payment_error=why)
        after = await apply_move(conn, clock, intent, Move.CANCEL, cancelled, last_payment_error=error)
    elif outcome is PaymentOutcome.EXPIRED and allowed(status, Move.EXPIRE):
        expired = PaymentExpired(**about(intent), last_payment_error=why)
        after = await apply_move(conn, clock, intent, Move.EXPIRE, expired, last_payment_error=error)
    elif outcome in (PaymentOutcome.CANCELLED, PaymentOutcome.EXPIRED) and allowed(status, Move.FAIL):
        # a payment in process that ended without paying
        reason = result.reason or f"The payment was {outcome.value.lower()} at the provider."
        failed = PaymentFailed(**about(intent), provider=provider, reason=reason, last_payment_error=why)
        after = await apply_move(conn, clock, intent, Move.FAIL, failed, last_payment_error=error)
    final = offered or IntentStatus(after.status) in (
        IntentStatus.AUTHORIZED,
        IntentStatus.REQUIRES_CAPTURE,
        IntentStatus.FAILED,
        IntentStatus.CANCELLED,
        IntentStatus.EXPIRED,
    )
    await repository.record_result(
        conn,
        checkout.id,
        payment_reference=result.provider_payment_reference,
        first_check_at=first_check_at,
        closed_at=now if final else None,
        release_lease=release_lease,
    )
    return after


async def _authorize(
    conn: AsyncConnection,
    clock: Clock,
    intent: PaymentIntent,
    checkout: Checkout,
    result: PaymentResult,
    now: datetime,
    *,
    held: bool = False,
) -> PaymentIntent:
    """The payment taken (AUTHORIZED) or ``held`` (REQUIRES_CAPTURE, until captured or voided)."""
    payment_id = new_id("pay")
    capture_before = result.capture_before if held else None
    authorized = PaymentAuthorized(
        **about(intent),
        payment_id=payment_id,
        provider=checkout.provider,
        amount=intent.amount,
        currency=intent.currency,
        capture_method="manual" if held else "automatic",
        capture_before=isoformat(capture_before) if capture_before is not None else None,
    )
    after = await apply_move(conn, clock, intent, Move.HOLD if held else Move.AUTHORIZE, authorized)
    # The unique payment_intent_id is the last guard: a second authorization fails here.
    await payments.record_authorization(
        conn,
        payment_id=payment_id,
        application_id=intent.application_id,
        payment_intent_id=intent.id,
        merchant_account_id=intent.merchant_account_id,
        external_reference=intent.external_reference,
        amount=intent.amount,
        currency=intent.currency,
        provider=checkout.provider,
        provider_reference=result.provider_payment_reference or checkout.reference,
        authorization_code=result.authorization_code,
        authorized_at=result.authorized_at or now,
        at=now,
        capture_method=intent.capture_method,
        held=held,
        capture_before=capture_before,
    )
    return after
