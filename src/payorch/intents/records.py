"""The records of the payment intents domain, as its repository and service return them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payorch.events.records import TimelineEntry
from payorch.intents.states import IntentStatus
from payorch.jsontypes import JsonObject


@dataclass(frozen=True, slots=True)
class PaymentIntent:
    id: str
    application_id: str
    merchant_account_id: str
    status: str
    external_reference: str
    amount: int
    currency: str
    description: str | None
    requested_provider: str
    provider: str | None  # the chosen provider, set by a checkout
    return_url: str
    metadata: dict[str, str]
    created_at: datetime
    updated_at: datetime
    # Why its latest checkout went where it went (payorch.routing.record); None before one.
    routing: JsonObject | None = None
    # Why its payment did not go through, as the provider answered (docs/api.md, "Why a payment
    # failed"; payorch.providers.payment_errors); None until a provider ended one unpaid.
    last_payment_error: JsonObject | None = None
    # The payment link whose buyer page made it (payorch.links); None for the API's intents.
    payment_link_id: str | None = None
    # automatic | manual (docs/api.md, "Holding and capturing"): manual holds the money at
    # REQUIRES_CAPTURE until the shop captures or voids it.
    capture_method: str = "automatic"


@dataclass(frozen=True, slots=True)
class IntentPayment:
    """What an intent shows of its payment, once the provider authorized."""

    id: str
    status: str
    authorization_code: str | None
    authorized_at: datetime
    amount_captured: int = 0
    capture_before: datetime | None = None  # while the payment is held


@dataclass(frozen=True, slots=True)
class Waiting:
    """What a PROCESSING intent waits for: its provider's confirmation, asked again at
    ``next_check_at``, for as long as the provider answers about it (until ``last_check_at``;
    None: no limit)."""

    provider: str
    next_check_at: datetime | None
    last_check_at: datetime | None


@dataclass(frozen=True, slots=True)
class PaymentIntentDetail:
    """An intent as the API shows it: with its timeline and its payment (None until authorized)."""

    intent: PaymentIntent
    timeline: list[TimelineEntry]
    payment: IntentPayment | None
    waiting: Waiting | None = None  # PROCESSING only


@dataclass(frozen=True, slots=True)
class IntentFilter:
    """Which intents a page lists (each field unset: any); the repository's own terms, made by
    listing.py from the API's query."""

    statuses: tuple[IntentStatus, ...] = ()
    merchant_account_id: str | None = None
    external_reference: str | None = None
    provider: str | None = None  # as shown: the chosen provider, else the requested one
