"""The event catalogue: each event type payorch emits and the model of its ``data`` (docs/api.md,
"Outgoing notices", is generated from the same facts and checked against it by a test).

A payload model holds exactly what its emitter writes, ``payment_intent_id`` included (the
envelope puts it first in ``data``; events about a webhook endpoint have none). An unknown field
is refused, so ``Model(...)`` with a wrong field is a type error (mypy) and a validation error at
run time. ``emit_payload`` (events/service.py) writes a model as its event.

A field that is absent rather than null when it does not apply (``last_payment_error``,
reconciliation's ``payment_intent_id``) has the default None and is left out when not set.
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypedDict

from pydantic import Field, JsonValue

from payorch.events.catalogue_parts import LastPaymentError, Routing, Strict
from payorch.events.types import WEBHOOK_TEST, EventType
from payorch.intents.records import PaymentIntent
from payorch.intents.states import IntentStatus
from payorch.reconciliation.records import FindingAction, FindingKind


class EventData(Strict):
    """An event's ``data``; ``TYPE`` names the event it is the payload of."""

    TYPE: ClassVar[str]
    DESCRIPTION: ClassVar[str]


class IntentEventData(EventData):
    """An event about a payment intent: it names the intent and carries the shop's own
    reference and metadata, so a receiver finds its order without mapping payi_ ids itself."""

    payment_intent_id: str
    external_reference: str = Field(description="The intent's external_reference: the shop's order.")
    metadata: dict[str, str] = Field(description="The intent's metadata, as given at its creation.")


class IntentFields(TypedDict):
    """What every intent event's data starts with (``IntentEventData(**about(intent), ...)``)."""

    payment_intent_id: str
    external_reference: str
    metadata: dict[str, str]


def about(intent: PaymentIntent) -> IntentFields:
    return {
        "payment_intent_id": intent.id,
        "external_reference": intent.external_reference,
        "metadata": intent.metadata,
    }


class PaymentIntentCreated(IntentEventData):
    TYPE = EventType.PAYMENT_INTENT_CREATED
    DESCRIPTION = "A payment intent was created."
    merchant_account_id: str
    amount: int
    currency: str
    requested_provider: str


class PaymentCheckoutStarted(IntentEventData):
    TYPE = EventType.PAYMENT_CHECKOUT_STARTED
    DESCRIPTION = "A checkout was made: the buyer can pay at the provider."
    provider: str
    routing: Routing


class PaymentProcessing(IntentEventData):
    TYPE = EventType.PAYMENT_PROCESSING
    DESCRIPTION = "The provider has the payment in process; reason: what it reported."
    provider: str
    reason: str


class PaymentAuthorized(IntentEventData):
    TYPE = EventType.PAYMENT_AUTHORIZED
    DESCRIPTION = (
        "The payment was authorized: taken (capture_method automatic, the intent AUTHORIZED) or "
        "held until captured or voided (manual, the intent REQUIRES_CAPTURE)."
    )
    payment_id: str
    provider: str
    amount: int
    currency: str
    capture_method: Literal["automatic", "manual"]
    capture_before: str | None = Field(
        None, description="Held only: the hold lapses then unless captured (null: not said)."
    )


class PaymentCaptured(IntentEventData):
    TYPE = EventType.PAYMENT_CAPTURED
    DESCRIPTION = (
        "A held payment was captured (the intent AUTHORIZED); amount_released: what the provider "
        "released of the hold."
    )
    payment_id: str
    provider: str
    amount_captured: int
    amount_released: int
    currency: str


class PaymentVoided(IntentEventData):
    TYPE = EventType.PAYMENT_VOIDED
    DESCRIPTION = "A held payment was released without capturing (the intent CANCELLED)."
    payment_id: str
    provider: str
    amount: int
    currency: str


class PaymentCaptureDue(IntentEventData):
    TYPE = EventType.PAYMENT_CAPTURE_DUE
    DESCRIPTION = (
        "A held payment nobody captured comes due: its hold lapses at capture_before "
        "(PAYORCH_HOLD_CAPTURE_DUE_SECONDS ahead). if_uncaptured: what payorch does with it, lapse "
        "(payment.expired at capture_before) or void (payment.voided now)."
    )
    payment_id: str
    provider: str
    amount_capturable: int
    currency: str
    capture_before: str = Field(json_schema_extra={"format": "date-time"})
    if_uncaptured: Literal["lapse", "void"]


class PaymentFailed(IntentEventData):
    TYPE = EventType.PAYMENT_FAILED
    DESCRIPTION = "The provider refused the payment, or it ended at the provider without paying."
    provider: str
    reason: str
    last_payment_error: LastPaymentError | None = None


class PaymentAttemptFailed(IntentEventData):
    TYPE = EventType.PAYMENT_ATTEMPT_FAILED
    DESCRIPTION = (
        "A provider declined with a code worth another try and the merchant's routing allows "
        "one: the intent stays REQUIRES_ACTION and the buyer is offered next_provider "
        "(sent instead of payment.failed)."
    )
    provider: str
    attempt: int = Field(description="This checkout's number among the intent's attempts, from 1.")
    max_attempts: int = Field(description="The routing program's on_decline.max_attempts.")
    next_provider: str = Field(description="The provider the buyer is offered next.")
    last_payment_error: LastPaymentError


class PaymentCancelled(IntentEventData):
    TYPE = EventType.PAYMENT_CANCELLED
    DESCRIPTION = (
        "Cancelled by the merchant or by the buyer; last_payment_error when the buyer cancelled "
        "at the provider."
    )
    reason: str
    last_payment_error: LastPaymentError | None = None


class PaymentExpired(IntentEventData):
    TYPE = EventType.PAYMENT_EXPIRED
    DESCRIPTION = (
        "The checkout expired (last_payment_error when the provider said why), or a hold nobody "
        "captured lapsed (reason authorization_lapsed, with the payment)."
    )
    reason: Literal["authorization_lapsed"] | None = None
    payment_id: str | None = None
    provider: str | None = None
    last_payment_error: LastPaymentError | None = None


class PaymentDisputed(IntentEventData):
    TYPE = EventType.PAYMENT_DISPUTED
    DESCRIPTION = "A dispute opened on the payment (chargeback or mediation)."
    payment_id: str
    provider: str
    kind: str | None = Field(
        description="chargeback (the card issuer) or mediation (the buyer at the provider)."
    )
    provider_status: str | None


class PaymentDisputeClosed(PaymentDisputed):
    TYPE = EventType.PAYMENT_DISPUTE_CLOSED
    DESCRIPTION = "The payment's dispute ended, won or lost."
    outcome: Literal["won", "lost"]


class RefundData(IntentEventData):
    payment_id: str
    refund_id: str


class RefundRequested(RefundData):
    TYPE = EventType.REFUND_REQUESTED
    DESCRIPTION = "A refund was asked of the provider."
    amount: int
    currency: str


class RefundSucceeded(RefundData):
    TYPE = EventType.REFUND_SUCCEEDED
    DESCRIPTION = "The provider refunded; payment_intent_status: the intent's status after it."
    amount: int
    currency: str
    payment_intent_status: IntentStatus


class RefundFailed(RefundData):
    TYPE = EventType.REFUND_FAILED
    DESCRIPTION = "The provider refused the refund."
    reason: str


class WebhookEndpointDisabled(EventData):
    TYPE = EventType.WEBHOOK_ENDPOINT_DISABLED
    DESCRIPTION = (
        "payorch disabled the endpoint because every attempt failed for too long; sent to the "
        "application's other enabled endpoints."
    )
    webhook_endpoint_id: str
    url: str
    reason: Literal["failing"]
    failing_since: str = Field(json_schema_extra={"format": "date-time"})
    failed_attempts: int


class WebhookTest(EventData):
    TYPE = WEBHOOK_TEST
    DESCRIPTION = (
        'Sent by hand to one endpoint (POST .../{id}/test), with "test": true beside data; '
        "never subscribed to."
    )
    webhook_endpoint_id: str
    url: str


class ReconciliationDiscrepancy(EventData):
    TYPE = EventType.RECONCILIATION_DISCREPANCY
    DESCRIPTION = (
        "Reconciliation found a difference between payorch and the provider, once per finding; "
        "payment_intent_id only when payorch knows the intent."
    )
    payment_intent_id: str | None = None
    finding_id: str
    date: str = Field(json_schema_extra={"format": "date"})
    provider: str
    kind: FindingKind
    action: FindingAction
    provider_reference: str
    payorch: dict[str, JsonValue]
    at_provider: dict[str, JsonValue]


class PaymentLinkData(EventData):
    """An event about a payment link (payorch.links): it names the link, its merchant and the
    shop's own reference, and what it collected."""

    payment_link_id: str
    merchant_account_id: str
    external_reference: str | None = Field(description="The link's external_reference, if given.")
    metadata: dict[str, str] = Field(description="The link's metadata, as given at its creation.")
    payments_count: int = Field(description="Its paid intents (authorized, refunded or not).")
    amount_collected: int = Field(description="Their amounts together, in the currency's minor unit.")
    currency: str


class PaymentLinkCompleted(PaymentLinkData):
    TYPE = EventType.PAYMENT_LINK_COMPLETED
    DESCRIPTION = "A payment link took its max_payments payments: its page no longer takes any."


class PaymentLinkExpired(PaymentLinkData):
    TYPE = EventType.PAYMENT_LINK_EXPIRED
    DESCRIPTION = "A payment link passed its expires_at before taking max_payments payments."


PAYLOADS: tuple[type[EventData], ...] = (
    PaymentIntentCreated,
    PaymentCheckoutStarted,
    PaymentProcessing,
    PaymentAuthorized,
    PaymentCaptured,
    PaymentVoided,
    PaymentAttemptFailed,
    PaymentCaptureDue,
    PaymentFailed,
    PaymentCancelled,
    PaymentExpired,
    PaymentDisputed,
    PaymentDisputeClosed,
    RefundRequested,
    RefundSucceeded,
    RefundFailed,
    WebhookEndpointDisabled,
    WebhookTest,
    ReconciliationDiscrepancy,
    PaymentLinkCompleted,
    PaymentLinkExpired,
)
CATALOGUE: dict[str, type[EventData]] = {str(model.TYPE): model for model in PAYLOADS}
# Events that carry "test": true beside their data in the envelope.
TEST_EVENTS = frozenset({WEBHOOK_TEST})


def payload_of(event_type: str) -> type[EventData]:
    """The model of ``event_type``'s data (KeyError for a type payorch never emits)."""
    return CATALOGUE[event_type]
