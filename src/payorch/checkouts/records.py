"""The checkouts domain's record: one checkout handed out for a payment intent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Literal


class CheckoutStatus(StrEnum):
    ACTIVE = "ACTIVE"  # the intent's current checkout
    REPLACED = "REPLACED"  # superseded by a newer checkout: can never move the intent
    CLOSED = "CLOSED"  # the intent reached a final outcome through it


@dataclass(frozen=True, slots=True)
class Checkout:
    id: str
    application_id: str
    payment_intent_id: str
    connector_id: str
    provider: str
    status: CheckoutStatus
    reference: str  # the provider's checkout: token (A) or preference id (B)
    payment_reference: str | None  # the provider's payment, once known
    url: str
    method: Literal["POST", "GET"]
    fields: Mapping[str, str]  # hidden form fields for POST
    provider_data: Mapping[str, str]  # the adapter's opaque keepsake (CheckoutRef.provider_data)
    expires_at: datetime
    created_at: datetime
    closed_at: datetime | None
    # Worker: when to look at it next (expiry, reconciliation), how many looks so far, and the
    # lease that lets one actor at a time talk to the provider about it.
    next_check_at: datetime | None
    check_attempts: int
    lease_until: datetime | None
    # The buyer came back through the checkout's return (confirmed by the provider), still ACTIVE.
    buyer_returned_at: datetime | None = None
