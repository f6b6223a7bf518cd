"""Event type names (docs/api.md, Outgoing notices)."""

from enum import StrEnum


class EventType(StrEnum):
    PAYMENT_INTENT_CREATED = "payment_intent.created"
    PAYMENT_CHECKOUT_STARTED = "payment.checkout.started"
    PAYMENT_PROCESSING = "payment.processing"
    PAYMENT_AUTHORIZED = "payment.authorized"
    PAYMENT_CAPTURED = "payment.captured"
    PAYMENT_VOIDED = "payment.voided"
    PAYMENT_ATTEMPT_FAILED = "payment.attempt_failed"
    PAYMENT_CAPTURE_DUE = "payment.capture_due"
    PAYMENT_FAILED = "payment.failed"
    PAYMENT_CANCELLED = "payment.cancelled"
    PAYMENT_EXPIRED = "payment.expired"
    PAYMENT_DISPUTED = "payment.disputed"
    PAYMENT_DISPUTE_CLOSED = "payment.dispute_closed"
    REFUND_REQUESTED = "refund.requested"
    REFUND_SUCCEEDED = "refund.succeeded"
    REFUND_FAILED = "refund.failed"
    WEBHOOK_ENDPOINT_DISABLED = "webhook_endpoint.disabled"
    RECONCILIATION_DISCREPANCY = "reconciliation.discrepancy"
    PAYMENT_LINK_COMPLETED = "payment_link.completed"
    PAYMENT_LINK_EXPIRED = "payment_link.expired"


ALL_EVENT_TYPES = frozenset(t.value for t in EventType)
# Sent by hand to one endpoint (webhooks/tools.py), never subscribed to: not an EventType, so no
# subscription, filter or list takes it.
WEBHOOK_TEST = "webhook.test"
