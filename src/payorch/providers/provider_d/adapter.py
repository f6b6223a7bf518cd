"""provider_d_redirect_get: Adyen Hosted Checkout (a session in ``mode: hosted``, the buyer sent
to its ``url`` by a GET redirect), Checkout API v71.

Quirks kept here:
- Adyen has no call that reads a payment or a modification back: its signed notifications are
  its word (docs/providers.md, "A provider whose notification is its word"). Each verified item
  is kept with ``ctx.words``; the checkout, the hold and the refunds are read from those words.
- The buyer's return (``sessionId``, ``sessionResult``) proves nothing: the session is read
  from the API with that ``sessionResult`` (its ``payments`` are the authorised ones), never
  believed from the URL.
- A session cannot be stopped: it is asked to end at our checkout's own expiry (at most 24 hours
  ahead), and before then it is not replaced nor cancelled (``cancel_checkout`` refuses).
- Captures, cancels and refunds answer ``201 received``; their outcome is their notification.
  Each carries our Idempotency-Key, so one sent again (its answer lost) is the same one.
- Our merchant reference ``<intent>.<checkout>`` comes back in every notification.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import timedelta
from typing import TypeVar

from pydantic import BaseModel

from payorch.jsontypes import JsonObject
from payorch.providers.base import (
    AdapterIdentity,
    CheckoutRef,
    CheckoutRequest,
    CheckoutSession,
    ConnectorContext,
    IncomingNotification,
    InvalidNotification,
    Mode,
    NotificationRef,
    PaymentOutcome,
    PaymentResult,
    ProviderRefundOutcome,
    ProviderRefundResult,
    ProviderRejected,
    RefundRequest,
)
from payorch.providers.calls import call
from payorch.providers.provider_d import PROVIDER_D, notices, wire
from payorch.providers.provider_d.credentials import ProviderDCredentials
from payorch.providers.provider_d.payment_results import MANUAL, from_session, from_words, reference_of
from payorch.providers.provider_d.refusals import rejected
from payorch.providers.references import ProviderIds, ignored, same
from payorch.providers.words import ProviderWord, WordQuery

SANDBOX_URL = "https://checkout-test.adyen.com/v71"
LIVE_URL = "https://{prefix}-checkout-live.adyenpayments.com/checkout/v71"  # the prefix: credentials
CURRENCIES = frozenset({"EUR", "USD", "GBP", "CLP", "MXN", "BRL", "JPY"})
LONGEST = timedelta(hours=24)  # a session's expiresAt: at most 24 hours after its creation
SESSION_IDS = ProviderIds(r"CS[0-9A-Za-z]{1,64}")
PSP_REFERENCES = ProviderIds(r"[0-9A-Za-z]{16}")
Answer = TypeVar("Answer", bound=BaseModel)
# Kept with the provider's words: payorch ended this session (it cannot be stopped at Adyen).
STOPPED = "PAYORCH_STOPPED"


class ProviderDAdapter(AdapterIdentity):
    provider_id = PROVIDER_D
    simulator_name = "provider_d"
    supports_notifications = True
    supported_currencies = CURRENCIES
    adds_status_to_return = False
    provider_urls = {Mode.SANDBOX: SANDBOX_URL, Mode.PRODUCTION: LIVE_URL}

    def base_url(self, mode: Mode, public_url: str) -> str:
        # The simulator serves the API's own path, version included.
        return super().base_url(mode, public_url) + ("/v71" if mode is Mode.MOCK else "")

    async def create_checkout(self, ctx: ConnectorContext, request: CheckoutRequest) -> CheckoutSession:
        if not self.supports_currency(request.currency):
            raise ProviderRejected(f"unknown currency {request.currency}", provider=PROVIDER_D)
        expires_at = min(request.expires_at, ctx.clock.now() + LONGEST)
        reference = reference_of(request.payment_intent_id, request.checkout_id)
        metadata = {"payment_intent_id": request.payment_intent_id}
        if ctx.mode is Mode.MOCK and request.notification_url:
            # The simulator's only way to learn it; Adyen's own: the Customer Area's webhook.
            metadata["payorch_notification_url"] = request.notification_url
        body: JsonObject = {
            "merchantAccount": ProviderDCredentials.of(ctx).merchant_account,
            "amount": {"value": request.amount, "currency": request.currency},
            "reference": reference,
            "returnUrl": request.return_url,
            "mode": "hosted",
            "expiresAt": expires_at.isoformat(timespec="seconds"),
            "metadata": metadata,
        }
        if request.capture_method == MANUAL:
            body["additionalData"] = {"manualCapture": "true"}
        session = await post(ctx, "create", wire.SESSIONS, wire.SessionCreated, body, request.checkout_id)
        if not session.url or not SESSION_IDS.valid(session.id):
            raise ProviderRejected("create: a session without its url or id", provider=PROVIDER_D)
        data = {"session_id": session.id, "reference": reference, "capture": request.capture_method}
        return CheckoutSession(
            url=session.url,
            method="GET",
            fields={},
            provider_reference=session.id,
            expires_at=expires_at,
            provider_data={**data, "expires_at": expires_at.isoformat()},
        )

    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        if not same(params.get("sessionId"), checkout.provider_reference):
            return ignored("the return names another checkout's session")
        session_result = params.get("sessionResult")
        if not session_result:
            return await self.read_status(ctx, checkout)
        path = f"{wire.SESSIONS}/{SESSION_IDS.path(checkout.provider_reference)}"
        query = {"sessionResult": session_result}  # httpx encodes it once (never '+' for a space)
        session = await call(
            live(ctx), "read session", "GET", path, wire.SessionResult, headers=headers_for(ctx),
            refusals=rejected, params=query,
        )
        if session.id != checkout.provider_reference:
            return ignored("the provider answered about another session")
        return from_session(session, await authorisations(ctx, checkout), checkout, ctx.clock.now())

    async def read_status(
        self, ctx: ConnectorContext, checkout: CheckoutRef, *, payment_reference: str | None = None
    ) -> PaymentResult:
        return from_words(await authorisations(ctx, checkout), checkout)

    def status_lifetime(self) -> timedelta | None:
        return None  # its words are kept by payorch: they can be read at any time

    async def cancel_checkout(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        """Adyen has no call that stops a session (it ends at its ``expiresAt``): payorch keeps
        that it ended it, and a payment the provider says it authorised on it from now on is
        given back (a reversal) when its word comes, never recorded."""
        found = await self.read_status(ctx, checkout)
        reference = checkout.provider_data.get("reference")
        if found.outcome is not PaymentOutcome.NOT_PAID or not reference:
            return found
        stop = ProviderWord(STOPPED, checkout.provider_reference, True, merchant_reference=reference)
        await ctx.words.record(stop)
        return dataclasses.replace(found, reason="ended by payorch: a later payment on it is given back")

    async def refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        result = await self._refund(ctx, request)
        if result.outcome is ProviderRefundOutcome.REFUSED:
            raise ProviderRejected(f"refund refused: {result.reason}", provider=PROVIDER_D, code="REFUND")
        return result

    async def read_refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        """The refund sent again under its key (the provider answers the first refund's
        reference, or makes it now if it never arrived), and its word, if it came."""
        return await self._refund(ctx, request)

    async def _refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        body: JsonObject = {
            "merchantAccount": ProviderDCredentials.of(ctx).merchant_account,
            "amount": {"value": request.amount, "currency": request.currency},
            "reference": request.refund_id,
        }
        path = f"{wire.PAYMENTS}/{PSP_REFERENCES.path(request.provider_payment_reference)}/refunds"
        made = await post(ctx, "refund", path, wire.Modification, body, request.refund_id)
        said = await word_on(ctx, wire.REFUND, made.psp_reference)
        if said is None:
            return ProviderRefundResult(ProviderRefundOutcome.PENDING, request.amount, made.psp_reference)
        outcome = ProviderRefundOutcome.SUCCEEDED if said.success else ProviderRefundOutcome.REFUSED
        reason = None if said.success else (said.reason or "the provider refused the refund")
        return ProviderRefundResult(outcome, request.amount, made.psp_reference, reason=reason)

    async def parse_notification(
        self, ctx: ConnectorContext, notification: IncomingNotification
    ) -> NotificationRef:
        credentials = ProviderDCredentials.of(ctx)
        key = credentials.hmac_key.get_secret_value()
        items = notices.verified(notification.body, key, credentials.merchant_account)
        for item in items:  # every item is the provider's word, kept once
            await ctx.words.record(notices.word_of(item))
        item = items[0]  # Adyen sends one item a notification; more are read from the words
        if item.event_code == wire.AUTHORISATION:
            intent, dot, _ = item.merchant_reference.partition(".")
            psp, topic = item.psp_reference, wire.AUTHORISATION
            if item.success == "true" and await self._ended(ctx, item.merchant_reference):
                await release(ctx, psp)  # authorised on a session payorch ended: given back
                return NotificationRef(None, topic=topic)
            return NotificationRef(psp, payment_intent_id=intent if dot else None, topic=topic)
        if item.event_code in wire.HOLD_EVENTS | wire.REFUND_EVENTS:
            payment = item.original_reference or item.psp_reference  # EXPIRE names the payment
            if not PSP_REFERENCES.valid(payment):
                raise InvalidNotification(f"a {item.event_code} without its payment's reference")
            hold, refund = item.event_code in wire.HOLD_EVENTS, item.event_code in wire.REFUND_EVENTS
            return NotificationRef(payment, topic=item.event_code, hold=hold, refund=refund)
        return NotificationRef(None, topic=item.event_code)

    async def _ended(self, ctx: ConnectorContext, reference: str) -> bool:
        return bool(await ctx.words.find(WordQuery(frozenset({STOPPED}), merchant_reference=reference)))


async def release(ctx: ConnectorContext, psp: str) -> None:
    """A payment goes back: a reversal cancels it if held, refunds it if captured."""
    body: JsonObject = {"merchantAccount": ProviderDCredentials.of(ctx).merchant_account}
    key = body["reference"] = f"{psp}-release"
    path = f"{wire.PAYMENTS}/{PSP_REFERENCES.path(psp)}/reversals"
    await post(ctx, "release", path, wire.Modification, body, key)


async def authorisations(ctx: ConnectorContext, checkout: CheckoutRef) -> list[ProviderWord]:
    reference = checkout.provider_data.get("reference")
    if not reference:
        return []
    return await ctx.words.find(WordQuery(frozenset({wire.AUTHORISATION}), merchant_reference=reference))


async def word_on(ctx: ConnectorContext, event: str, reference: str) -> ProviderWord | None:
    """The newest word of ``event`` on the modification ``reference`` (None: not said yet)."""
    said = await ctx.words.find(WordQuery(frozenset({event}), reference=reference))
    return said[-1] if said else None


def live(ctx: ConnectorContext) -> ConnectorContext:
    """PRODUCTION's base URL carries the company's live prefix (its credentials)."""
    if "{prefix}" not in ctx.base_url:
        return ctx
    prefix = ProviderDCredentials.of(ctx).live_prefix
    if not prefix:
        raise ProviderRejected("the connector has no live_prefix for PRODUCTION", provider=PROVIDER_D)
    return dataclasses.replace(ctx, base_url=ctx.base_url.replace("{prefix}", prefix))


def headers_for(ctx: ConnectorContext) -> dict[str, str]:
    return {"X-API-Key": ProviderDCredentials.of(ctx).api_key.get_secret_value()}


async def post(
    ctx: ConnectorContext, operation: str, path: str, model: type[Answer], body: JsonObject, key: str
) -> Answer:
    """A JSON POST with our Idempotency-Key (at most 64 characters); its 201 as ``model``."""
    headers = {**headers_for(ctx), "Idempotency-Key": key[:64]}
    created = frozenset({201})
    sent = live(ctx)
    return await call(sent, operation, "POST", path, model, headers=headers, refusals=rejected, json=body,
                      ok=created)
