"""The refund gateway over the real provider adapters (providers/base.py).

Finds the merchant's connector for the payment's provider (enabled or not: a payment already
made is refunded through the configuration that took it), builds the adapter's context and
translates the adapter's answers and failures into the refund service's vocabulary.
"""

from __future__ import annotations

import logging

from payorch.connectors import repository as connectors
from payorch.connectors.service import decrypt_credentials
from payorch.payments.refund_gateway import (
    LookupAnswer,
    LookupOutcome,
    RefundAnswer,
    RefundOrder,
    RefundOutcome,
)
from payorch.providers import base
from payorch.providers.base import (
    ConnectorContext,
    ProviderRejected,
    ProviderUnavailable,
    RefundRequest,
    UnknownProvider,
    get_adapter,
)
from payorch.runtime import Runtime

log = logging.getLogger("payorch.refunds")


class ProviderRefundGateway:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    async def refund(self, order: RefundOrder) -> RefundAnswer:
        found = await self._context(order)
        if found is None:
            return RefundAnswer(RefundOutcome.FAILED, f"No connector for {order.provider}.")
        adapter, ctx = found
        try:
            result = await adapter.refund(ctx, _request(order))
        except ProviderRejected as exc:
            return RefundAnswer(RefundOutcome.FAILED, exc.reason)
        except ProviderUnavailable as exc:
            log.warning(
                "refund outcome unknown: %s", exc.reason, extra={"refund_id": order.refund_id}
            )
            return RefundAnswer(RefundOutcome.UNKNOWN)
        if result.outcome is base.RefundOutcome.SUCCEEDED:
            return RefundAnswer(
                RefundOutcome.SUCCEEDED, provider_refund_id=result.provider_refund_reference
            )
        return RefundAnswer(RefundOutcome.UNKNOWN)  # accepted, not final: read it back later

    async def lookup(self, order: RefundOrder) -> LookupAnswer:
        found = await self._context(order)
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
        if result.outcome is base.RefundOutcome.SUCCEEDED:
            return LookupAnswer(LookupOutcome.APPLIED, result.provider_refund_reference)
        if result.outcome is base.RefundOutcome.NOT_APPLIED:
            return LookupAnswer(LookupOutcome.NOT_APPLIED)
        return LookupAnswer(LookupOutcome.UNKNOWN)

    async def _context(
        self, order: RefundOrder
    ) -> tuple[base.ProviderAdapter, ConnectorContext] | None:
        try:
            adapter = get_adapter(order.provider)
        except UnknownProvider:
            return None
        async with self._runtime.database.engine.connect() as conn:
            rows = await connectors.for_merchant(conn, order.merchant_account_id)
        connector = next((row for row in rows if row.provider == order.provider), None)
        if connector is None:
            return None
        ctx = ConnectorContext.build(
            self._runtime,
            connector_id=connector.id,
            application_id=connector.application_id,
            provider=connector.provider,
            mode=connector.mode,
            credentials=decrypt_credentials(self._runtime.cipher, connector),
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
