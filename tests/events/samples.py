"""Sample payloads of the events an intent's move emits (intents.states.EVENTS_OF_MOVE), built
as apply_move's callers build them: for tests that move an intent directly."""

from __future__ import annotations

from collections.abc import Callable

from payorch.events.catalogue import (
    IntentEventData,
    IntentFields,
    PaymentAttemptFailed,
    PaymentAuthorized,
    PaymentCancelled,
    PaymentCaptured,
    PaymentCheckoutStarted,
    PaymentExpired,
    PaymentFailed,
    PaymentProcessing,
    PaymentVoided,
)
from payorch.events.catalogue_parts import LastPaymentError, Routing
from payorch.events.types import EventType
from payorch.intents.states import EVENTS_OF_MOVE, Move
from payorch.providers.payment_errors import PaymentErrorCode
from payorch.routing.record import Strategy

PROVIDER = "provider_a"
_ROUTING = Routing(
    strategy=Strategy.EXPLICIT,
    rule=None,
    version=None,
    candidates=[],
    skipped=[],
    chosen=PROVIDER,
    fallback=None,
)


def _about(intent_id: str) -> IntentFields:
    return {"payment_intent_id": intent_id, "external_reference": "order-1", "metadata": {}}


SAMPLES: dict[EventType, Callable[[str], IntentEventData]] = {
    EventType.PAYMENT_CHECKOUT_STARTED: lambda intent_id: PaymentCheckoutStarted(
        **_about(intent_id), provider=PROVIDER, routing=_ROUTING
    ),
    EventType.PAYMENT_PROCESSING: lambda intent_id: PaymentProcessing(
        **_about(intent_id), provider=PROVIDER, reason="In review."
    ),
    EventType.PAYMENT_AUTHORIZED: lambda intent_id: PaymentAuthorized(
        **_about(intent_id),
        payment_id="pay_sample",
        provider=PROVIDER,
        amount=1500,
        currency="CLP",
        capture_method="automatic",
    ),
    EventType.PAYMENT_CAPTURED: lambda intent_id: PaymentCaptured(
        **_about(intent_id),
        payment_id="pay_sample",
        provider=PROVIDER,
        amount_captured=1000,
        amount_released=500,
        currency="CLP",
    ),
    EventType.PAYMENT_VOIDED: lambda intent_id: PaymentVoided(
        **_about(intent_id), payment_id="pay_sample", provider=PROVIDER, amount=1500, currency="CLP"
    ),
    EventType.PAYMENT_FAILED: lambda intent_id: PaymentFailed(
        **_about(intent_id), provider=PROVIDER, reason="Declined."
    ),
    EventType.PAYMENT_ATTEMPT_FAILED: lambda intent_id: PaymentAttemptFailed(
        **_about(intent_id),
        provider=PROVIDER,
        attempt=1,
        max_attempts=2,
        next_provider="provider_b",
        last_payment_error=LastPaymentError(
            code=PaymentErrorCode.INSUFFICIENT_FUNDS,
            message="Declined.",
            provider=PROVIDER,
            provider_code="-3",
            provider_message="Declined.",
            at="2026-12-05T00:00:00Z",
        ),
    ),
    EventType.PAYMENT_CANCELLED: lambda intent_id: PaymentCancelled(**_about(intent_id), reason="Cancelled."),
    EventType.PAYMENT_EXPIRED: lambda intent_id: PaymentExpired(**_about(intent_id)),
}


def sample_payloads(move: Move, intent_id: str) -> tuple[IntentEventData, ...]:
    """A payload for each event ``move`` emits, in its order."""
    return tuple(SAMPLES[event_type](intent_id) for event_type in EVENTS_OF_MOVE[move])
