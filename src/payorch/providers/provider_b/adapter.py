"""provider_b_redirect_get: a wallet/checkout provider whose checkout is a GET redirect.

Quirks kept here:
- A preference carries ``external_reference`` = the intent id; its payments carry it back, and
  every payment read is checked against the checkout (reference, amount, currency) before it
  is believed. The buyer's return parameters only say which payment to read.
- The provider is asked about every return and notification: its ``status`` is never read,
  and ``payment_id`` only says which payment to read first. A payment that did not pay
  (rejected, pending...) does not speak for the intent by itself: the buyer may have tried again
  on the same preference, so the intent's payments are searched and the best one wins
  (approved > in process > rejected > cancelled).
- A return without a payment (``payment_id=null``) is considered only when it names this
  checkout's preference (an unguessable id). Its payments are searched; when there is none the
  preference is expired first and searched again (``cancel_checkout``), and only a provider
  that then shows no payment makes it CANCELLED: a buyer still paying in another tab wins.
- Notifications are verified (x-signature, HMAC-SHA256 with ``webhook_secret``, constant time,
  ``ts`` within ``NOTIFICATION_TOLERANCE_SECONDS``), then the payment is read.
- Every POST sends ``X-Idempotency-Key``: the checkout id for a preference, our refund id for a
  refund, so a retried refund never refunds twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import timedelta

from payorch.clock import isoformat
from payorch.providers.base import (
    AdapterIdentity,
    CheckoutRef,
    CheckoutRequest,
    CheckoutSession,
    ConnectorContext,
    IncomingNotification,
    Mode,
    NotificationRef,
    PaymentOutcome,
    PaymentResult,
    ProviderRefundResult,
    RefundRequest,
)
from payorch.providers.calls import call, read_or_none
from payorch.providers.http import parse, send
from payorch.providers.provider_b import PROVIDER_B, notifications, wire
from payorch.providers.provider_b.credentials import ProviderBCredentials
from payorch.providers.provider_b.payment_results import details_of, mismatch, rank, result_of
from payorch.providers.provider_b.refusals import rejected
from payorch.providers.references import ignored, same
from payorch.providers.refund_results import RefundStatuses, from_refunded_total

BASE_URL = "https://api.mercadopago.com"  # SANDBOX (TEST- token) and PRODUCTION
# The currencies of the provider's sites (one per country it operates in).
CURRENCIES = frozenset({"ARS", "BRL", "CLP", "COP", "MXN", "PEN", "UYU", "USD"})
CREATED = frozenset({200, 201})
REFUNDS = RefundStatuses(PROVIDER_B, frozenset({wire.APPROVED}), frozenset({wire.REJECTED, wire.CANCELLED}))

# Ids travel in URL paths: accept only what the provider's ids look like.
IDS = notifications.IDS


def _given(value: str | None) -> str | None:
    return None if value in (None, "", wire.NULL) else value


class ProviderBAdapter(AdapterIdentity):
    provider_id = PROVIDER_B
    simulator_name = "provider_b"
    supports_notifications = True
    supported_currencies = CURRENCIES
    adds_status_to_return = True
    provider_urls = {Mode.SANDBOX: BASE_URL, Mode.PRODUCTION: BASE_URL}

    # -- create -------------------------------------------------------------------------------

    async def create_checkout(self, ctx: ConnectorContext, request: CheckoutRequest) -> CheckoutSession:
        self.takes_currency(request.currency)
        body = wire.CreatePreference(
            items=[wire.item_of(request)],
            back_urls=wire.BackUrls(
                success=request.return_url, failure=request.return_url, pending=request.return_url
            ),
            auto_return="all",
            external_reference=request.payment_intent_id,
            notification_url=request.notification_url,
            expires=True,
            expiration_date_from=isoformat(ctx.clock.now()),
            expiration_date_to=isoformat(request.expires_at),
            metadata={
                "payment_intent_id": request.payment_intent_id,
                "checkout_id": request.checkout_id,
                "connector_id": ctx.connector_id,
            },
        )
        preference = await call(
            ctx,
            "create",
            "POST",
            wire.PREFERENCES,
            wire.Preference,
            headers=_headers(ctx, idempotency_key=request.checkout_id),
            refusals=rejected,
            ok=CREATED,
            json=body.model_dump(exclude_none=True),
        )
        url = preference.init_point
        if ctx.mode is Mode.SANDBOX and preference.sandbox_init_point:
            url = preference.sandbox_init_point
        return CheckoutSession(
            url=url,
            method="GET",
            fields={},
            provider_reference=preference.id,
            expires_at=request.expires_at,
            provider_data={"preference_id": preference.id},
        )

    # -- the buyer's return ---------------------------------------------------------------------

    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        preference_id = _given(params.get("preference_id"))
        if preference_id and not same(preference_id, checkout.provider_reference):
            return ignored("the return names another checkout's preference")
        reference = _given(params.get("external_reference"))
        if reference and reference != checkout.payment_intent_id:
            return ignored("the return names another payment intent")
        payment_id = _given(params.get("payment_id")) or _given(params.get("collection_id"))
        if payment_id:
            if not IDS.valid(payment_id):
                return ignored("malformed payment id")
            result = await self._read_payment(ctx, checkout, payment_id)
            if result is None or result.outcome is PaymentOutcome.IGNORED:
                return result or ignored("the provider knows no such payment")
            return await self._best(ctx, checkout, result)
        if not preference_id:
            # Without a payment only the preference id (unguessable) proves the return is real.
            return ignored("a return without payment must name this checkout's preference")
        found = await self._search(ctx, checkout)
        if found is not None:
            return found
        stopped = await self.cancel_checkout(ctx, checkout)  # expired, then searched again
        if stopped.outcome is PaymentOutcome.NOT_PAID:
            return PaymentResult(PaymentOutcome.CANCELLED, reason="the buyer came back without paying")
        return stopped

    # -- status, cancel ---------------------------------------------------------------------------

    async def read_status(
        self, ctx: ConnectorContext, checkout: CheckoutRef, *, payment_reference: str | None = None
    ) -> PaymentResult:
        read = None
        if payment_reference and IDS.valid(payment_reference):
            read = await self._read_payment(ctx, checkout, payment_reference)
        return await self._status_from(ctx, checkout, read)

    async def _status_from(
        self, ctx: ConnectorContext, checkout: CheckoutRef, read: PaymentResult | None
    ) -> PaymentResult:
        """The status that a payment ``read`` from the provider gives the checkout (searched when
        there is none to trust)."""
        if read is not None and read.outcome is not PaymentOutcome.IGNORED:
            return await self._best(ctx, checkout, read)
        found = await self._search(ctx, checkout)
        return found or PaymentResult(PaymentOutcome.NOT_PAID, reason="no payment at the provider")

    def status_lifetime(self) -> timedelta | None:
        return None  # payments can be read at any time

    async def cancel_checkout(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        """Expire the preference first (so no payment can start after we look), then confirm
        that no payment succeeded or is in process for it."""
        # A validity window already over: [now - 2 s, now - 1 s] (the provider wants to > from,
        # and a window ending exactly now would still be open at this very instant).
        now = ctx.clock.now()
        body = wire.ExpirePreference(
            expires=True,
            expiration_date_from=isoformat(now - timedelta(seconds=2)),
            expiration_date_to=isoformat(now - timedelta(seconds=1)),
        )
        preference = IDS.path(checkout.provider_reference)
        response = await send(
            ctx,
            "expire",
            "PUT",
            f"{wire.PREFERENCES}/{preference}",
            headers=_headers(ctx),
            json=body.model_dump(),
        )
        if response.status_code not in (200, 201, 404):  # 404: the preference is already gone
            raise rejected("expire", response)
        found = await self._search(ctx, checkout)
        if found is None or found.outcome in (PaymentOutcome.FAILED, PaymentOutcome.CANCELLED):
            return PaymentResult(
                PaymentOutcome.NOT_PAID,
                reason="preference expired; no payment succeeded or is in process",
                details={"earlier_attempt": found.details} if found else {},
            )
        return found

    # -- refunds ----------------------------------------------------------------------------------

    async def refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        payment = IDS.path(request.provider_payment_reference)
        whole = request.refunded_before == 0 and request.amount == request.payment_amount
        body = None
        if not whole:  # an empty body refunds everything; a partial refund names its amount
            body = wire.CreateProviderBRefund(amount=wire.to_major(request.amount, request.currency))
        response = await send(
            ctx,
            "refund",
            "POST",
            f"{wire.PAYMENTS}/{payment}/refunds",
            headers=_headers(ctx, idempotency_key=request.refund_id),
            json=body.model_dump() if body else None,
        )
        if response.status_code not in (200, 201):
            raise rejected("refund", response)
        refund = parse(wire.ProviderBRefund, response, "refund", PROVIDER_B)
        # pending, in_process, or no status: settled later from the payment's refunded total.
        return REFUNDS.result(
            request, refund.status, refund.id, failure=refund.reason, status_code=response.status_code
        )

    async def read_refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        """From the payment's refunded total: up by the refund -> SUCCEEDED, unchanged ->
        NOT_APPLIED, anything else -> PENDING. (A retry of ``refund`` with the same refund id
        is also safe: the provider answers the first refund again.)"""
        payment_id = IDS.path(request.provider_payment_reference)
        path = f"{wire.PAYMENTS}/{payment_id}"
        payment = await call(
            ctx, "read payment", "GET", path, wire.ProviderBPayment, headers=_headers(ctx), refusals=rejected
        )
        refunded = None
        if payment.transaction_amount_refunded is not None:
            refunded = wire.to_minor(payment.transaction_amount_refunded, request.currency)
        if payment.status == wire.REFUNDED and refunded is None:
            refunded = request.payment_amount
        return from_refunded_total(request, refunded, {"status": payment.status, "refunded_amount": refunded})

    # -- notifications ----------------------------------------------------------------------------

    async def parse_notification(
        self, ctx: ConnectorContext, notification: IncomingNotification
    ) -> NotificationRef:
        """Verify (the webhook style) and learn from the provider which payment the notice is
        about (notifications.py); the caller confirms it against its checkout."""
        ref, payment = await notifications.parse_notification(ctx, notification, _headers)
        if payment is None:
            return ref
        read = payment  # the provider's answer, read once: confirmed against the checkout later

        async def confirm(ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
            return await self._status_from(ctx, checkout, _checked(ctx, read, checkout))

        return dataclasses.replace(ref, confirm=confirm)

    # -- reading payments -------------------------------------------------------------------------

    async def _read_payment(
        self, ctx: ConnectorContext, checkout: CheckoutRef, payment_id: str
    ) -> PaymentResult | None:
        """The payment, checked against the checkout; None when the provider knows no such id."""
        path = f"{wire.PAYMENTS}/{payment_id}"
        payment = await read_or_none(
            ctx, "read payment", path, wire.ProviderBPayment, headers=_headers(ctx), refusals=rejected
        )
        return _checked(ctx, payment, checkout) if payment is not None else None

    async def _best(self, ctx: ConnectorContext, checkout: CheckoutRef, read: PaymentResult) -> PaymentResult:
        """``read`` unless it did not pay and another payment of the intent ranks higher (a
        retry on the same preference): a stale or replayed rejection never hides a payment."""
        if read.outcome is PaymentOutcome.AUTHORIZED:
            return read
        found = await self._search(ctx, checkout)
        if found is not None and rank(found) < rank(read):
            return found
        return read

    async def _search(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult | None:
        """The payment that speaks for the checkout's intent, or None when there is none."""
        found = await call(
            ctx,
            "search payments",
            "GET",
            wire.PAYMENTS_SEARCH,
            wire.PaymentSearch,
            headers=_headers(ctx),
            refusals=rejected,
            params={
                "external_reference": checkout.payment_intent_id,
                "sort": "date_created",
                "criteria": "desc",
            },
        )
        results = [
            result_of(ctx, payment, checkout.currency)
            for payment in found.results
            if not mismatch(payment, checkout)
        ]
        if not results:
            return None
        # Newest first from the provider; a stable sort keeps that order within a rank.
        return sorted(results, key=rank)[0]


# ---------------------------------------------------------------------------------------------


def _checked(ctx: ConnectorContext, payment: wire.ProviderBPayment, checkout: CheckoutRef) -> PaymentResult:
    """The payment's result for the checkout, or IGNORED when it is not the checkout's."""
    distrust = mismatch(payment, checkout)
    if distrust:
        return ignored(f"payment {payment.id} not trusted: {distrust}", details_of(payment))
    return result_of(ctx, payment, checkout.currency)


def _headers(ctx: ConnectorContext, *, idempotency_key: str | None = None) -> dict[str, str]:
    headers = {
        "Authorization": "Bearer " + ProviderBCredentials.of(ctx).access_token.get_secret_value(),
        "Content-Type": "application/json",
    }
    if idempotency_key is not None:
        headers["X-Idempotency-Key"] = idempotency_key
    return headers
