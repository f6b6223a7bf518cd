"""Provider A's transaction (commit/status answer) in our vocabulary: which outcome it means."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta

from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    PaymentOutcome,
    PaymentResult,
    ProviderUnavailable,
)
from payorch.providers.provider_a import PROVIDER_A, wire
from payorch.providers.references import ignored

CURRENCY = "CLP"  # the only currency it charges


def result_of(ctx: ConnectorContext, checkout: CheckoutRef, status: wire.TransactionStatus) -> PaymentResult:
    """Commit/status fields -> our outcome. Approved only if response_code == 0 and AUTHORIZED
    (or a later state of an authorized payment); vci is never looked at."""
    token = checkout.provider_reference
    details = {
        "status": status.status,
        "response_code": status.response_code,
        "payment_type_code": status.payment_type_code,
        "card_last4": status.card_detail.card_number if status.card_detail else None,
        "buy_order": status.buy_order,
    }
    expected_order = checkout.provider_data.get("buy_order")
    if (status.amount is not None and status.amount != checkout.amount) or (
        expected_order and status.buy_order and status.buy_order != expected_order
    ):
        return ignored("the provider's transaction does not match this checkout", details)
    if status.status == wire.INITIALIZED:
        return PaymentResult(PaymentOutcome.NOT_PAID, token, reason="not paid yet", details=details)
    if status.status in (
        wire.AUTHORIZED,
        wire.CAPTURED,
        wire.REVERSED,
        wire.NULLIFIED,
        wire.PARTIALLY_NULLIFIED,
    ):
        if status.response_code == 0 and checkout.provider_data.get("capture_method") == "manual":
            return _held(ctx, checkout, status, details)
        if status.response_code == 0:
            return PaymentResult(
                outcome=PaymentOutcome.AUTHORIZED,
                provider_payment_reference=token,
                authorization_code=status.authorization_code,
                amount=status.amount if status.amount is not None else checkout.amount,
                currency=CURRENCY,
                authorized_at=status.transaction_date or ctx.clock.now(),
                details=details,
            )
        if status.status != wire.AUTHORIZED:  # a later state without an approval code: odd
            raise ProviderUnavailable(
                f"status {status.status} with response_code {status.response_code}",
                provider=PROVIDER_A,
            )
    if status.status in (wire.AUTHORIZED, wire.FAILED):
        return PaymentResult(
            outcome=PaymentOutcome.FAILED,
            provider_payment_reference=token,
            amount=status.amount,
            currency=CURRENCY,
            reason=f"rejected by the provider (response_code {status.response_code})",
            details=details,
        )
    raise ProviderUnavailable(f"unknown transaction status {status.status!r}", provider=PROVIDER_A)


def _held(
    ctx: ConnectorContext,
    checkout: CheckoutRef,
    status: wire.TransactionStatus,
    details: Mapping[str, object],
) -> PaymentResult:
    """A deferred-capture transaction: approved and held (AUTHORIZED), taken (CAPTURED: payorch
    captured it, or someone did at the provider), or released before payorch recorded it."""
    token = checkout.provider_reference
    if status.status in (wire.REVERSED, wire.NULLIFIED):
        released = "the hold was released at the provider"
        return PaymentResult(PaymentOutcome.FAILED, token, reason=released, details=dict(details))
    authorized_at = status.transaction_date or ctx.clock.now()
    held = status.status == wire.AUTHORIZED
    return PaymentResult(
        outcome=PaymentOutcome.HELD if held else PaymentOutcome.AUTHORIZED,
        provider_payment_reference=token,
        authorization_code=status.authorization_code,
        amount=status.amount if status.amount is not None else checkout.amount,
        currency=CURRENCY,
        authorized_at=authorized_at,
        capture_before=authorized_at + timedelta(days=wire.HOLD_DAYS) if held else None,
        details=dict(details),
    )
