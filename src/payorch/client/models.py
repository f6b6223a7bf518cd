"""Typed models of the API's resources, as the client receives them.

Lenient on purpose: unknown fields are kept (``extra="allow"``) so a newer server never breaks
an older client, and fields the contract may omit default to None. Secrets returned once
(a webhook endpoint's ``secret``, a new API credential's ``api_key``) are ``SecretStr``: masked in
repr and logs, read with ``.get_secret_value()``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

T = TypeVar("T")


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class TimelineEntry(Model):
    type: str
    at: datetime


class IntentPayment(Model):
    """The ``payment`` object on an intent, present once the provider authorized."""

    id: str
    status: str
    authorization_code: str | None = None
    authorized_at: datetime | None = None
    amount_captured: int | None = None  # all of it for capture_method automatic
    capture_before: datetime | None = None  # while held: the hold lapses then unless captured


class RoutingCandidate(Model):
    provider: str
    priority: int | None = None
    weight: int | None = None  # a split's share, in percent
    score: dict[str, Any] | None = None  # the success-rate strategy's {rate, attempts}


class RoutingSkipped(Model):
    provider: str
    reason: str  # currency, capture_method, not_enabled, unavailable, down, refused
    detail: str | None = None


class RoutingRecord(Model):
    """Why a checkout went where it went (docs/routing.md)."""

    strategy: str  # explicit, priority, rule, split, success_rate
    rule: str | None = None
    version: int | None = None
    candidates: list[RoutingCandidate] = Field(default_factory=list)
    skipped: list[RoutingSkipped] = Field(default_factory=list)
    chosen: str | None = None
    fallback: str | None = None


class RoutingVersion(Model):
    """A merchant's routing rules; ``version`` None: none saved (the connectors' priority)."""

    version: int | None = None
    active: bool = True
    default: str = "priority"
    rules: list[dict[str, Any]] = Field(default_factory=list)
    created_at: datetime | None = None
    activated_at: datetime | None = None


class RoutingEvaluation(Model):
    provider: str | None = None
    routing: RoutingRecord


class PaymentError(Model):
    """Why the intent's payment did not go through (docs/api.md, "Why a payment failed")."""

    # payorch's code, the same for every provider: declined, insufficient_funds,
    # invalid_card_details, fraud_suspected, expired, cancelled_by_buyer, provider_error
    # (kept a plain string: a newer server may add codes).
    code: str
    message: str | None = None
    provider: str | None = None
    provider_code: str | None = None  # the provider's own code, as it sent it
    provider_message: str | None = None
    at: datetime | None = None


class IntentProcessing(Model):
    """What a PROCESSING intent waits for: the provider's confirmation, asked again at
    ``next_check_at``, until ``last_check_at`` (None: no limit)."""

    waiting_for: str  # provider_confirmation
    provider: str | None = None
    next_check_at: datetime | None = None
    last_check_at: datetime | None = None


class PaymentIntent(Model):
    id: str
    status: str
    merchant_account_id: str | None = None
    external_reference: str | None = None
    amount: int
    currency: str
    description: str | None = None
    provider: str | None = None
    return_url: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    created_at: datetime | None = None
    payment: IntentPayment | None = None
    timeline: list[TimelineEntry] = Field(default_factory=list)
    routing: RoutingRecord | None = None  # once a checkout was made
    last_payment_error: PaymentError | None = None  # once a provider ended the payment unpaid
    processing: IntentProcessing | None = None  # while PROCESSING
    payment_link_id: str | None = None  # made by a payment link's page
    capture_method: str = "automatic"  # manual: held (REQUIRES_CAPTURE) until captured or voided


class CheckoutAction(Model):
    type: str  # REDIRECT
    url: str
    method: str  # POST or GET
    fields: dict[str, str] = Field(default_factory=dict)

    def html_form(self, submit_label: str = "Pay") -> str:
        """For method POST: an auto-submittable HTML form with the fields as hidden inputs."""
        from html import escape

        inputs = "".join(
            f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">'
            for k, v in self.fields.items()
        )
        return (
            f'<form method="{escape(self.method.lower())}" action="{escape(self.url)}">'
            f'{inputs}<button type="submit">{escape(submit_label)}</button></form>'
        )


class Checkout(Model):
    payment_intent_id: str
    status: str
    provider: str
    checkout: CheckoutAction
    expires_at: datetime | None = None
    routing: RoutingRecord | None = None


class PaymentDispute(Model):
    status: str  # OPEN | WON | LOST
    kind: str | None = None  # chargeback | mediation
    disputed_at: datetime | None = None
    closed_at: datetime | None = None


class Payment(Model):
    id: str
    payment_intent_id: str | None = None
    merchant_account_id: str | None = None
    external_reference: str | None = None
    status: str
    amount: int | None = None
    refunded_amount: int | None = None
    currency: str | None = None
    provider: str | None = None
    authorization_code: str | None = None
    authorized_at: datetime | None = None
    created_at: datetime | None = None
    dispute: PaymentDispute | None = None  # a chargeback or mediation after the payment
    # Holds (capture_method manual): REQUIRES_CAPTURE until captured (AUTHORIZED), voided
    # (VOIDED) or lapsed (EXPIRED); refunds count from amount_captured.
    capture_method: str = "automatic"
    amount_capturable: int = 0  # what a capture may still take (REQUIRES_CAPTURE only)
    amount_captured: int | None = None
    amount_released: int = 0  # released to the buyer: the rest of a partial capture, or a void
    capture_before: datetime | None = None
    captured_at: datetime | None = None


class Refund(Model):
    refund_id: str
    payment_id: str | None = None
    payment_intent_id: str | None = None
    status: str
    amount: int | None = None
    currency: str | None = None
    reason: str | None = None
    failure_reason: str | None = None
    created_at: datetime | None = None


class WebhookEndpoint(Model):
    id: str
    application_id: str | None = None
    url: str
    enabled: bool = True
    events: list[str] = Field(default_factory=list)
    created_at: datetime | None = None
    secret: SecretStr | None = Field(
        None, description="Only in the creation and secret rotation responses."
    )
    previous_secret_expires_at: datetime | None = None  # the rotated-out secret signs until then


class WebhookDelivery(Model):
    id: str
    endpoint_id: str | None = None
    event_id: str | None = None
    event_type: str | None = None
    status: str
    attempts: int | None = None
    next_attempt_at: datetime | None = None
    last_attempt_at: datetime | None = None
    response_status: int | None = None
    response_excerpt: str | None = None
    error: str | None = None
    failure_reason: str | None = None  # connection_refused, timeout, tls_error, url_not_allowed, ...
    failure_message: str | None = None
    created_at: datetime | None = None
    payload: str | None = None  # one delivery read by id: the exact body sent
    payment_intent_id: str | None = None


class Event(Model):
    """An event, as listed by GET /v1/events and as received by a webhook endpoint."""

    id: str
    type: str
    created_at: datetime | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    test: bool = False  # a webhook.test event sent by hand (docs/webhooks.md)

    @property
    def payment_intent_id(self) -> str | None:
        value = self.data.get("payment_intent_id")
        return value if isinstance(value, str) else None

    @property
    def external_reference(self) -> str | None:
        """The intent's external_reference: in every event about a payment or a refund."""
        value = self.data.get("external_reference")
        return value if isinstance(value, str) else None

    @property
    def metadata(self) -> dict[str, str]:
        """The intent's metadata ({} for an event about no intent)."""
        value = self.data.get("metadata")
        if not isinstance(value, dict):
            return {}
        return {str(key): str(item) for key, item in value.items()}


class Connector(Model):
    """A merchant's provider configuration; credentials are write-only (``has_credentials``)."""

    id: str
    provider: str
    mode: str
    enabled: bool
    priority: int
    has_credentials: bool = False
    merchant_account_id: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ApiCredential(Model):
    id: str
    name: str | None = None
    prefix: str | None = None
    environment: str | None = None
    api_key: SecretStr | None = Field(None, description="Only in the creation response.")
    created_at: datetime | None = None
    revoked_at: datetime | None = None
    scopes: list[str] | None = Field(None, description="None: every scope.")
    expires_at: datetime | None = None
    last_used_at: datetime | None = None


class User(Model):
    """A person of the application (docs/access.md, "People")."""

    id: str
    email: str | None = None
    role: str | None = None
    status: str | None = None
    invite_url: SecretStr | None = Field(
        None, description="Only in the answer of an invite: the link that sets the password."
    )
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_signed_in_at: datetime | None = None
    invite_expires_at: datetime | None = None


class PaymentLink(Model):
    """A page a buyer opens to pay (docs/payment-links.md); send them ``url``."""

    id: str
    url: str
    status: str
    merchant_account_id: str | None = None
    amount: int
    currency: str
    description: str | None = None
    external_reference: str | None = None
    expires_at: datetime | None = None
    max_payments: int = 1
    after_payment_url: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    buyer_message: str | None = None
    payments_count: int = 0
    amount_collected: int = 0
    created_at: datetime | None = None
    updated_at: datetime | None = None


class Page(Model, Generic[T]):
    """One page of a list; pass ``next_cursor`` as ``cursor`` for the next (None: last page)."""

    items: list[T]
    next_cursor: str | None = None
