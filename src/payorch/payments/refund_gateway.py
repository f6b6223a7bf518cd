"""The seam between the refund rules and the providers: a RefundGateway.

The refund service never talks to a provider directly. It hands a ``RefundOrder`` to the
gateway on ``runtime.refund_gateway`` and gets an answer in our own vocabulary:

- ``refund`` sends the refund once. SUCCEEDED / FAILED are definite; UNKNOWN means the provider
  did not answer usably (timeout, network, 5xx) and the refund may or may not have happened.
- ``lookup`` reads the provider to learn what became of an earlier ``refund`` whose answer was
  UNKNOWN: APPLIED, NOT_APPLIED (then, and only then, it may be sent again), REFUSED (the provider
  said no, late: a provider whose word comes by notification) or UNKNOWN (ask later).

The refund id travels in the order so that adapters whose provider supports idempotency send it
as the provider's idempotency key. So does the connector that took the payment, read by the
refund flow in its own phase: a gateway never opens a database connection. The default
implementation is adapter_refund_gateway.py (over the provider adapters); tests give a fake.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class GatewayRefundOutcome(StrEnum):
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    UNKNOWN = "UNKNOWN"


class LookupOutcome(StrEnum):
    APPLIED = "APPLIED"
    NOT_APPLIED = "NOT_APPLIED"
    REFUSED = "REFUSED"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True, slots=True)
class RefundConnector:
    """The merchant's configuration for the payment's provider (enabled or not: a payment
    already made is refunded through the configuration that took it)."""

    id: str
    application_id: str
    provider: str
    mode: str
    credentials: Mapping[str, str] | None = field(repr=False)  # decrypted: never log them


@dataclass(frozen=True)
class RefundOrder:
    refund_id: str  # rfd_...; the provider's idempotency key where it has one
    amount: int
    currency: str
    application_id: str
    merchant_account_id: str
    payment_id: str
    payment_intent_id: str
    payment_amount: int
    provider: str
    provider_reference: str  # token (A) or payment id (B)
    # What we know the provider refunded before this refund (our SUCCEEDED total): lets an
    # adapter without idempotency tell from the provider's refunded total whether it applied.
    refunded_before: int
    connector: RefundConnector | None  # None: the merchant has no such configuration


@dataclass(frozen=True)
class GatewayRefundAnswer:
    outcome: GatewayRefundOutcome
    failure_reason: str | None = None
    provider_refund_id: str | None = None


@dataclass(frozen=True)
class LookupAnswer:
    outcome: LookupOutcome
    provider_refund_id: str | None = None
    failure_reason: str | None = None  # REFUSED: the provider's words


class RefundGateway(Protocol):
    async def refund(self, order: RefundOrder) -> GatewayRefundAnswer: ...

    async def lookup(self, order: RefundOrder) -> LookupAnswer: ...
