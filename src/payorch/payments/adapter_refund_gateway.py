"""The refund gateway over the real provider adapters (providers/base.py).

Builds the adapter's context from the connector the order carries (the refund flow read it in
its own phase: no database connection is opened here) and translates the adapter's answers and
failures into the refund service's vocabulary.
"""

from __future__ import annotations

import logging

from payorch.payments.refund_gateway import (
    GatewayRefundAnswer,
    GatewayRefundOutcome,
    LookupAnswer,
    LookupOutcome,
    RefundOrder,
)
from payorch.providers import base
from payorch.providers.base import (
    ConnectorContext,
    ProviderRejected,
    ProviderUnavailable,
    RefundRequest,
)
from payorch.providers.contexts import ConnectorContexts
from payorch.providers.registry import UnknownProvider, get_adapter

log = logging.getLogger("payorch.refunds")


class ProviderRefundGateway:
    def __init__(self, contexts: ConnectorContexts) -> None:
        self._contexts = contexts  # base URL, MOCK credentials, HTTP client of the adapter calls

    async def refund(self, order: RefundOrder) -> GatewayRefundAnswer:
        found = self._context(order)
        if found is None:
            return GatewayRefundAnswer(
                GatewayRefundOutcome.FAILED, f"No connector for {order.provider}."
            )
        adapter, ctx = found
        try:
            result = await adapter.refund(ctx, _request(order))
        except ProviderRejected as exc:
            return GatewayRefundAnswer(GatewayRefundOutcome.FAILED, exc.reason)
        except ProviderUnavailable as exc:
            log.warning(
                "refund outcome unknown: %s", exc.reason, extra={"refund_id": order.refund_id}
            )
            return GatewayRefundAnswer(GatewayRefundOutcome.UNKNOWN)
        if result.outcome is base.ProviderRefundOutcome.SUCCEEDED:
            return GatewayRefundAnswer(
                GatewayRefundOutcome.SUCCEEDED, provider_refund_id=result.provider_refund_reference
            )
        return GatewayRefundAnswer(GatewayRefundOutcome.UNKNOWN)  # accepted, not final: read it back later

    async def lookup(self, order: RefundOrder) -> LookupAnswer:
        found = self._context(order)
        if found is None:
            return LookupAnswer(LookupOutcome.NOT_APPLIED)  # nothing could have been sent
        adapter, ctx = found
        try:
            result = await adapter.read_refund(ctx, _request(order))
        except (ProviderRejected, ProviderUnavailable) as exc:
            log.warning(
                "refund lookup failed: %s", exc.reason, extra={"refund_id": order.refund_id}
            )
            return LookupAnswer(LookupOutcome.UNKNOWN)
        if result.outcome is base.ProviderRefundOutcome.SUCCEEDED:
            return LookupAnswer(LookupOutcome.APPLIED, result.provider_refund_reference)
        if result.outcome is base.ProviderRefundOutcome.NOT_APPLIED:
            return LookupAnswer(LookupOutcome.NOT_APPLIED)
        if result.outcome is base.ProviderRefundOutcome.REFUSED:
            return LookupAnswer(LookupOutcome.REFUSED, failure_reason=result.reason)
        return LookupAnswer(LookupOutcome.UNKNOWN)

    def _context(self, order: RefundOrder) -> tuple[base.ProviderAdapter, ConnectorContext] | None:
        connector = order.connector
        if connector is None:
            return None
        try:
            adapter = get_adapter(order.provider)
        except UnknownProvider:
            return None
        ctx = self._contexts.build(
            connector_id=connector.id,
            application_id=connector.application_id,
            provider=connector.provider,
            mode=connector.mode,
            credentials=connector.credentials,
        )
        return adapter, ctx


def _request(order: RefundOrder) -> RefundRequest:
    return RefundRequest(
        refund_id=order.refund_id,
        provider_payment_reference=order.provider_reference,
        amount=order.amount,
        currency=order.currency,
        payment_amount=order.payment_amount,
        refunded_before=order.refunded_before,
    )
