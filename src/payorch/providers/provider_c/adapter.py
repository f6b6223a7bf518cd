"""provider_c_redirect_get: Stripe Checkout (a hosted page reached by a GET redirect).

Quirks kept here:
- A Checkout Session in ``mode=payment`` carries ``client_reference_id`` = the intent id and
  ``metadata[checkout_id]``; every session read is checked against the checkout (reference,
  amount, currency, checkout) before it is believed.
- The buyer's return proves nothing: ``success_url`` brings ``session_id`` (the provider fills
  in ``{CHECKOUT_SESSION_ID}``), which only says which session to read; ``cancel_url`` brings our
  unguessable checkout id. A cancel return stops the session (expire) and reads it again before
  anything moves: the buyer may have paid in another tab.
- Lifetime: the provider wants ``expires_at`` 30 minutes to 24 hours ahead. A shorter checkout
  keeps its own (shorter) expiry: the session is asked for 30 minutes and a little more, and our
  expiry job stops it (expire) when our time is up. A longer one is cut to 24 hours. Our own
  deadline rides along as ``metadata[payorch_expires_at]`` (unix seconds): the simulator's
  session ends then, so its page and the service name one deadline.
- Events are verified (``Stripe-Signature``, signature.py), then the session is read from the
  API: the body only names it.
- Every POST sends ``Idempotency-Key``: the checkout id for a session, ``<checkout>-expire`` to
  stop it, our refund id for a refund, so a retried refund never refunds twice.
- In MOCK mode the simulator delivers a session's events to ``metadata[payorch_notification_url]``
  (the real provider: to the endpoint registered with it, which is that same URL).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import timedelta
from typing import TypeVar

from pydantic import BaseModel

from payorch.providers.base import (
    AdapterIdentity,
    CheckoutRef,
    CheckoutRequest,
    CheckoutSession,
    ConnectorContext,
    DisputeObservation,
    IncomingNotification,
    InvalidNotification,
    Mode,
    NotificationRef,
    PaymentOutcome,
    PaymentResult,
    ProviderRefundOutcome,
    ProviderRefundResult,
    ProviderRejected,
    ProviderUnavailable,
    RefundRequest,
)
from payorch.providers.calls import call, read_or_none
from payorch.providers.http import send
from payorch.providers.provider_c import PROVIDER_C, signature, wire
from payorch.providers.provider_c.credentials import ProviderCCredentials
from payorch.providers.provider_c.payment_results import dispute_of, mismatch, result_of, utc
from payorch.providers.provider_c.refusals import rejected
from payorch.providers.references import ProviderIds, ignored, same
from payorch.providers.refund_results import RefundStatuses

BASE_URL = "https://api.stripe.com"  # SANDBOX (sk_test_) and PRODUCTION (sk_live_)
CURRENCIES = frozenset({"CLP", "USD", "EUR", "GBP", "MXN", "BRL", "PEN", "JPY", "KRW"})
SHORTEST = timedelta(minutes=30, seconds=60)  # the provider's minimum, with a minute to travel
LONGEST = timedelta(hours=24)
# The literal the provider replaces with the session id on the way back.
SESSION_ID_TEMPLATE = "{CHECKOUT_SESSION_ID}"
IDS = ProviderIds(r"[A-Za-z0-9_]{1,255}")  # what a provider id may look like in our paths
REFUNDS = RefundStatuses(
    PROVIDER_C, frozenset({wire.REFUND_SUCCEEDED}), frozenset({wire.REFUND_FAILED, wire.REFUND_CANCELED})
)
Read = TypeVar("Read", bound=BaseModel)


class ProviderCAdapter(AdapterIdentity):
    provider_id = PROVIDER_C
    simulator_name = "provider_c"
    supports_notifications = True
    supported_currencies = CURRENCIES
    adds_status_to_return = False
    provider_urls = {Mode.SANDBOX: BASE_URL, Mode.PRODUCTION: BASE_URL}

    # -- create -------------------------------------------------------------------------------

    async def create_checkout(self, ctx: ConnectorContext, request: CheckoutRequest) -> CheckoutSession:
        self.takes_currency(request.currency)
        now = ctx.clock.now()
        expires_at = min(request.expires_at, now + LONGEST)
        asked = max(expires_at, now + SHORTEST)
        metadata: dict[str, wire.FormValue] = {
            "payment_intent_id": request.payment_intent_id,
            "checkout_id": request.checkout_id,
            "connector_id": ctx.connector_id,
        }
        if request.notification_url:
            metadata["payorch_notification_url"] = request.notification_url
        metadata["payorch_expires_at"] = str(int(expires_at.timestamp()))
        name = request.description or (
            f"Order {request.external_reference}"
            if request.external_reference
            else f"Payment {request.payment_intent_id}"
        )
        separator = "&" if "?" in request.return_url else "?"
        body = wire.form_of(
            {
                "mode": "payment",
                "line_items": [
                    {
                        "price_data": {
                            "currency": request.currency.lower(),
                            "unit_amount": wire.wire_amount(request.amount, request.currency),
                            "product_data": {"name": name[:250]},
                        },
                        "quantity": 1,
                    }
                ],
                "success_url": f"{request.return_url}{separator}session_id={SESSION_ID_TEMPLATE}",
                "cancel_url": f"{request.return_url}{separator}cancelled={request.checkout_id}",
                "client_reference_id": request.payment_intent_id,
                "expires_at": int(asked.timestamp()),
                "metadata": metadata,
                "payment_intent_data": {
                    "metadata": {
                        "payment_intent_id": request.payment_intent_id,
                        "checkout_id": request.checkout_id,
                    },
                    **({"capture_method": wire.MANUAL} if request.capture_method == wire.MANUAL else {}),
                },
            }
        )
        session = await _post(ctx, "create", wire.SESSIONS, wire.CheckoutSession, body, request.checkout_id)
        if not session.url:
            raise ProviderUnavailable("create: unexpected HTTP 200", provider=PROVIDER_C, code="200")
        return CheckoutSession(
            url=session.url,
            method="GET",
            fields={},
            provider_reference=session.id,
            expires_at=expires_at,
            provider_data={"session_id": session.id},
        )

    # -- the buyer's return ---------------------------------------------------------------------

    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        session_id = params.get("session_id")
        if session_id is not None:
            if not same(session_id, checkout.provider_reference):
                return ignored("the return names another checkout's session")
            return await self.read_status(ctx, checkout)
        if not same(params.get("cancelled"), checkout.checkout_id):
            return ignored("a return must name this checkout's session or checkout")
        # The buyer says they gave up: stop the session, then believe only what it shows.
        stopped = await self.cancel_checkout(ctx, checkout)
        if stopped.outcome in (PaymentOutcome.NOT_PAID, PaymentOutcome.EXPIRED):
            return PaymentResult(
                PaymentOutcome.CANCELLED, reason="the buyer came back without paying", details=stopped.details
            )
        return stopped

    # -- status, cancel ---------------------------------------------------------------------------

    async def read_status(
        self, ctx: ConnectorContext, checkout: CheckoutRef, *, payment_reference: str | None = None
    ) -> PaymentResult:
        session = await self._read_session(ctx, checkout.provider_reference)
        if session is None:
            return ignored("the provider knows no such session")
        return await self._with_deadline(ctx, _checked(ctx, session, checkout))

    async def _with_deadline(self, ctx: ConnectorContext, result: PaymentResult) -> PaymentResult:
        """A hold's deadline: its charge's ``payment_method_details.card.capture_before``."""
        reference = result.provider_payment_reference
        if result.outcome is not PaymentOutcome.HELD or reference is None:
            return result
        path = f"{wire.PAYMENT_INTENTS}/{IDS.path(reference)}"
        expand = {"expand[]": "latest_charge"}
        held = await _read(ctx, "read payment intent", path, wire.HeldPaymentIntent, expand)
        deadline = held.capture_before if held is not None else None
        return dataclasses.replace(result, capture_before=utc(deadline) if deadline is not None else None)

    def status_lifetime(self) -> timedelta | None:
        return None  # sessions and their payments can be read at any time

    async def cancel_checkout(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        """Expire the session (only an open one can be: a 400 means it already ended), then read
        it: NOT_PAID when it ended without a payment."""
        session_id = IDS.path(checkout.provider_reference)
        path = f"{wire.SESSIONS}/{session_id}/expire"
        headers = form_headers(ctx, f"{checkout.checkout_id}-expire")
        response = await send(ctx, "expire", "POST", path, headers=headers, content=b"")
        if response.status_code not in (200, 400):
            raise rejected("expire", response)
        result = await self.read_status(ctx, checkout)
        if result.outcome is PaymentOutcome.EXPIRED:
            return dataclasses.replace(
                result, outcome=PaymentOutcome.NOT_PAID, reason="session expired unpaid"
            )
        return result

    # -- refunds ----------------------------------------------------------------------------------

    async def refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        body = wire.form_of(
            {
                "payment_intent": request.provider_payment_reference,
                "amount": wire.wire_amount(request.amount, request.currency),
                "metadata": {"payorch_refund_id": request.refund_id},
            }
        )
        refund = await _post(ctx, "refund", wire.REFUNDS, wire.Refund, body, request.refund_id)
        return REFUNDS.result(request, refund.status, refund.id, failure=refund.failure_reason)

    async def read_refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        """The payment's refunds, searched for ours (``metadata[payorch_refund_id]``)."""
        found = await call(
            ctx,
            "list refunds",
            "GET",
            wire.REFUNDS,
            wire.RefundList,
            headers=headers_for(ctx),
            refusals=rejected,
            params={"payment_intent": request.provider_payment_reference, "limit": "100"},
        )
        for refund in found.data:
            if refund.metadata.get("payorch_refund_id") == request.refund_id:
                try:
                    return REFUNDS.result(request, refund.status, refund.id, failure=refund.failure_reason)
                except ProviderRejected:
                    break  # failed or canceled: nothing was refunded, safe to try again
        return ProviderRefundResult(ProviderRefundOutcome.NOT_APPLIED, request.amount)

    # -- notifications ----------------------------------------------------------------------------

    async def parse_notification(
        self, ctx: ConnectorContext, notification: IncomingNotification
    ) -> NotificationRef:
        try:
            secret = ProviderCCredentials.of(ctx).webhook_secret.get_secret_value()
        except ProviderRejected:
            raise InvalidNotification("the connector has no webhook_secret") from None
        signature.verify(secret, notification.headers, notification.body, now=ctx.clock.now())
        event = wire.event_of(notification.body)
        if event is None:
            raise InvalidNotification("not an event")
        if event.type in wire.DISPUTE_EVENTS:
            return await self._dispute_notification(ctx, event)
        if event.type in wire.HOLD_EVENTS:
            return await self._hold_notification(ctx, event)
        if event.type not in wire.SESSION_EVENTS:
            return NotificationRef(provider_payment_reference=None, topic=event.type)
        named = event.data.object.get("id")
        if not isinstance(named, str) or not IDS.valid(named):
            raise InvalidNotification(f"a {event.type} event without a usable session id")
        session = await self._read_session(ctx, named)  # the body proves nothing
        if session is None:
            return NotificationRef(provider_payment_reference=None, topic=event.type)
        read = session
        intent = session.payment_intent

        async def confirm(ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
            if read.id != checkout.provider_reference:
                return await self.read_status(ctx, checkout)
            return await self._with_deadline(ctx, _checked(ctx, read, checkout))

        return NotificationRef(
            provider_payment_reference=intent.id if isinstance(intent, wire.PaymentIntent) else intent,
            payment_intent_id=session.client_reference_id,
            topic=event.type,
            confirm=confirm,
        )

    async def _hold_notification(self, ctx: ConnectorContext, event: wire.Event) -> NotificationRef:
        """A hold held, captured, canceled or expired: a hint. Its PaymentIntent is read from the
        API (the body only names it, or its charge names it); the checkout is confirmed by
        reading the session, a held payment settled by reading the hold (payments/hold_job.py)."""
        named = event.data.object.get("payment_intent" if event.type.startswith("charge.") else "id")
        if not isinstance(named, str) or not IDS.valid(named):
            raise InvalidNotification(f"a {event.type} event without a usable PaymentIntent id")
        return await self._intent_notification(ctx, event, named, hold=True)

    async def _dispute_notification(self, ctx: ConnectorContext, event: wire.Event) -> NotificationRef:
        """A chargeback on a paid PaymentIntent: the dispute and its PaymentIntent are read from
        the API (the body only names the dispute); the intent's ``metadata`` names ours."""
        named = event.data.object.get("id")
        if not isinstance(named, str) or not IDS.valid(named):
            raise InvalidNotification(f"a {event.type} event without a usable dispute id")
        dispute = await _read(ctx, "read dispute", f"{wire.DISPUTES}/{named}", wire.Dispute)
        if dispute is None or not dispute.payment_intent or not IDS.valid(dispute.payment_intent):
            return NotificationRef(provider_payment_reference=None, topic=event.type)
        seen = dispute_of(dispute)
        return await self._intent_notification(ctx, event, dispute.payment_intent, dispute=seen)

    async def _intent_notification(
        self,
        ctx: ConnectorContext,
        event: wire.Event,
        intent_id: str,
        *,
        dispute: DisputeObservation | None = None,
        hold: bool = False,
    ) -> NotificationRef:
        """The notice about the PaymentIntent ``intent_id`` as read from the API; its
        ``metadata`` names payorch's intent (nothing to act on if the provider knows none)."""
        path = f"{wire.PAYMENT_INTENTS}/{intent_id}"
        intent = await _read(ctx, "read payment intent", path, wire.PaymentIntent)
        if intent is None:
            return NotificationRef(provider_payment_reference=None, topic=event.type)
        return NotificationRef(
            provider_payment_reference=intent.id,
            payment_intent_id=intent.metadata.get("payment_intent_id"),
            topic=event.type,
            dispute=dispute,
            hold=hold,
        )

    # -- calls ------------------------------------------------------------------------------------

    async def _read_session(self, ctx: ConnectorContext, session_id: str) -> wire.CheckoutSession | None:
        path = f"{wire.SESSIONS}/{IDS.path(session_id)}"
        expand = {"expand[]": "payment_intent"}
        return await _read(ctx, "read session", path, wire.CheckoutSession, expand)


async def _read(
    ctx: ConnectorContext,
    operation: str,
    path: str,
    model: type[Read],
    params: Mapping[str, str] | None = None,
) -> Read | None:
    """One object read from the API; None when the provider knows no such object (404)."""
    headers = headers_for(ctx)
    return await read_or_none(ctx, operation, path, model, headers=headers, refusals=rejected, params=params)


async def _post(
    ctx: ConnectorContext, operation: str, path: str, model: type[Read], body: bytes, key: str
) -> Read:
    """A form POST with our idempotency key; its 200 answer as ``model``."""
    headers = form_headers(ctx, key)
    return await call(ctx, operation, "POST", path, model, headers=headers, refusals=rejected, content=body)


def _checked(ctx: ConnectorContext, session: wire.CheckoutSession, checkout: CheckoutRef) -> PaymentResult:
    distrust = mismatch(session, checkout)
    if distrust:
        return ignored(f"session {session.id} not trusted: {distrust}")
    return result_of(ctx, session)


def headers_for(ctx: ConnectorContext) -> dict[str, str]:
    key = ProviderCCredentials.of(ctx).secret_key.get_secret_value()
    return {"Authorization": "Bearer " + key, "Stripe-Version": wire.API_VERSION}


def form_headers(ctx: ConnectorContext, key: str) -> dict[str, str]:
    """A POST's: a form body, and our idempotency key (a retry never does it twice)."""
    headers = headers_for(ctx)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    headers["Idempotency-Key"] = key
    return headers
