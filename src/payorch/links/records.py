"""The records of payment links, as their repository and service return them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from payorch.intents.states import IntentStatus


class LinkStatus(StrEnum):
    ACTIVE = "ACTIVE"
    COMPLETED = "COMPLETED"  # max_payments paid intents
    EXPIRED = "EXPIRED"  # expires_at passed first
    DEACTIVATED = "DEACTIVATED"  # by a person or a key


# An intent counts as one of its link's payments once the provider authorized it, whatever
# happened after (a refund gives money back; it does not reopen the link).
PAID = (IntentStatus.AUTHORIZED, IntentStatus.PARTIALLY_REFUNDED, IntentStatus.REFUNDED)


@dataclass(frozen=True, slots=True)
class PaymentLink:
    id: str
    application_id: str
    merchant_account_id: str
    status: str
    amount: int
    currency: str
    description: str
    external_reference: str | None
    expires_at: datetime | None
    max_payments: int
    after_payment_url: str | None
    metadata: dict[str, str]
    buyer_message: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Tally:
    """What a link collected: its paid intents and their amounts together."""

    payments_count: int = 0
    amount_collected: int = 0


@dataclass(frozen=True, slots=True)
class LinkDetail:
    link: PaymentLink
    tally: Tally


@dataclass(frozen=True, slots=True)
class LinkPayment:
    """One intent a link's page made, as the dashboard lists it."""

    payment_intent_id: str
    status: str
    provider: str | None
    created_at: datetime
