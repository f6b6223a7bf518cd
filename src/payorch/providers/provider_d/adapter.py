"""provider_d_redirect_get: Adyen Hosted Checkout (``mode: hosted``), Checkout API v71. No call
reads a payment back: checkouts, holds and refunds are read from its words (docs/providers.md)."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import TypeVar

from pydantic import BaseModel, Field, SecretStr

from payorch.jsontypes import JsonObject
from payorch.providers import base
from payorch.providers.base import CheckoutRef, ConnectorContext, Mode, NotificationRef, PaymentResult
from payorch.providers.calls import call
from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.holds import HoldRef, HoldState, HoldStatus, by_word, made_already
from payorch.providers.provider_d import PROVIDER_D, wire
from payorch.providers.provider_d.payment_results import (
    MANUAL,
    auth_code,
    from_session,
    from_words,
    reference_of,
)
from payorch.providers.references import ProviderIds, ignored, same
from payorch.providers.refund_results import from_word
from payorch.providers.words import ProviderWord, WordQuery, keep, latest, standing

LIVE_URL = "https://{prefix}-checkout-live.adyenpayments.com/checkout/v71"  # the prefix: credentials
LONGEST = timedelta(hours=24)  # a session's expiresAt: at most 24 hours after its creation
SESSION_IDS = ProviderIds(r"CS[0-9A-Za-z]{1,64}")
PSP_REFERENCES = ProviderIds(r"[0-9A-Za-z]{16}")
Answer = TypeVar("Answer", bound=BaseModel)
Refund = base.ProviderRefundResult
RefundOutcome = base.ProviderRefundOutcome


class ProviderDCredentials(ConnectorCredentials):
    provider = PROVIDER_D
    api_key: SecretStr = Field(min_length=1, description="The API key of the web service user (X-API-Key).")
    merchant_account: str = Field(min_length=1, description="The merchant account code payments are made on.")
    hmac_key: SecretStr = Field(
        min_length=1,
        description="The HMAC key (hex) of the standard notifications webhook set up in the Customer Area.",
    )
    live_prefix: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9-]*$",
        description="PRODUCTION only: the live URL prefix (Customer Area, Developers > API URLs).",
    )


class ProviderDAdapter(base.AdapterIdentity):
    provider_id = PROVIDER_D
    simulator_name = "provider_d"
    supports_notifications = True
    supported_currencies = frozenset({"EUR", "USD", "GBP", "CLP", "MXN", "BRL", "JPY"})
    adds_status_to_return = False
    provider_urls = {Mode.SANDBOX: "https://checkout-test.adyen.com/v71", Mode.PRODUCTION: LIVE_URL}

    def base_url(self, mode: Mode, public_url: str) -> str:
        # The simulator serves the API's own path, version included.
        return super().base_url(mode, public_url) + ("/v71" if mode is Mode.MOCK else "")

    async def create_checkout(
        self, ctx: ConnectorContext, request: base.CheckoutRequest
    ) -> base.CheckoutSession:
        self.takes_currency(request.currency)
        expires_at = min(request.expires_at, ctx.clock.now() + LONGEST)
        reference = reference_of(request.payment_intent_id, request.checkout_id)
        metadata = {"payment_intent_id": request.payment_intent_id}
        if ctx.mode is Mode.MOCK and request.notification_url:
            # The simulator's only way to learn it; Adyen's own: the Customer Area's webhook.
            metadata["payorch_notification_url"] = request.notification_url
        body: JsonObject = {
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
            raise base.ProviderRejected("create: a session without its url or id", provider=PROVIDER_D)
        data = {"session_id": session.id, "reference": reference, "capture": request.capture_method,
                "expires_at": expires_at.isoformat()}
        return base.CheckoutSession(session.url, "GET", {}, session.id, expires_at, provider_data=data)

    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        if not same(params.get("sessionId"), checkout.provider_reference):
            return ignored("the return names another checkout's session")
        if not params.get("sessionResult"):
            return await self.read_status(ctx, checkout)
        path = f"{wire.SESSIONS}/{SESSION_IDS.path(checkout.provider_reference)}"
        query = {"sessionResult": params["sessionResult"]}  # httpx encodes it once (never '+' for a space)
        session = await call(
            live(ctx), "read session", "GET", path, wire.SessionResult, headers=headers_for(ctx),
            refusals=wire.rejected, params=query,
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
        # Nothing stops a session: a payment on it after payorch stopped the checkout is given
        # back when its word comes (NotificationRef.give_back).
        found = await self.read_status(ctx, checkout)
        if found.outcome is not base.PaymentOutcome.NOT_PAID:
            return found
        return dataclasses.replace(found, reason="ended by payorch: a later payment on it is given back")

    async def refund(self, ctx: ConnectorContext, request: base.RefundRequest) -> Refund:
        result = await self.read_refund(ctx, request)
        if result.outcome is RefundOutcome.REFUSED:
            reason = f"refund refused: {result.reason}"
            raise base.ProviderRejected(reason, provider=PROVIDER_D, code="REFUND")
        return result

    async def read_refund(self, ctx: ConnectorContext, request: base.RefundRequest) -> Refund:
        """Sent again under its key: the first refund (made now if it never arrived), then its word."""
        body: JsonObject = {"amount": {"value": request.amount, "currency": request.currency}}
        body["reference"] = request.refund_id
        path = f"{_payment(request.provider_payment_reference)}/refunds"
        psp = (await post(ctx, "refund", path, wire.Modification, body, request.refund_id)).psp_reference
        return from_word(request, await latest(ctx.words, wire.REFUND, psp), psp)

    async def parse_notification(
        self, ctx: ConnectorContext, notification: base.IncomingNotification
    ) -> NotificationRef:
        credentials = ProviderDCredentials.of(ctx)
        key = credentials.hmac_key.get_secret_value()
        items = wire.verified(notification.body, key, credentials.merchant_account)
        refs = [ref_of(word) for word in await keep(ctx.words, map(wire.word_of, items))]
        return dataclasses.replace(refs[0], more=tuple(refs[1:]))


def ref_of(word: ProviderWord) -> NotificationRef:
    """What one item asks payorch to read (a payment on a stopped checkout: how to give it back)."""
    if word.event == wire.AUTHORISATION:
        intent, dot, checkout_id = (word.merchant_reference or "").partition(".")
        return NotificationRef(
            word.reference, payment_intent_id=intent if dot else None, topic=word.event,
            checkout_id=checkout_id or None, give_back=releasing(word.reference) if word.success else None,
            authorization_code=auth_code(word) if word.success else None,
        )
    if word.event in wire.HOLD_EVENTS | wire.REFUND_EVENTS:
        payment = word.original_reference or word.reference  # EXPIRE names the payment
        if not PSP_REFERENCES.valid(payment):
            raise base.InvalidNotification(f"a {word.event} without its payment's reference")
        hold, refund = word.event in wire.HOLD_EVENTS, word.event in wire.REFUND_EVENTS
        return NotificationRef(payment, topic=word.event, hold=hold, refund=refund)
    return NotificationRef(None, topic=word.event)


def releasing(psp: str) -> Callable[[ConnectorContext], Awaitable[None]]:
    """A reversal of ``psp``: cancelled if held, refunded if captured."""

    async def release(ctx: ConnectorContext) -> None:
        key = f"{psp}-release"
        await post(ctx, "release", f"{_payment(psp)}/reversals", wire.Modification, {"reference": key}, key)

    return release


async def authorisations(ctx: ConnectorContext, checkout: CheckoutRef) -> list[ProviderWord]:
    reference = checkout.provider_data.get("reference")
    if not reference:
        return []
    return await ctx.words.find(WordQuery(frozenset({wire.AUTHORISATION}), merchant_reference=reference))


def live(ctx: ConnectorContext) -> ConnectorContext:
    """PRODUCTION's base URL carries the company's live prefix (its credentials)."""
    if "{prefix}" not in ctx.base_url:
        return ctx
    prefix = ProviderDCredentials.of(ctx).live_prefix
    if not prefix:
        raise base.ProviderRejected("the connector has no live_prefix for PRODUCTION", provider=PROVIDER_D)
    return dataclasses.replace(ctx, base_url=ctx.base_url.replace("{prefix}", prefix))


def headers_for(ctx: ConnectorContext) -> dict[str, str]:
    return {"X-API-Key": ProviderDCredentials.of(ctx).api_key.get_secret_value()}


def _payment(psp: str) -> str:
    return f"{wire.PAYMENTS}/{PSP_REFERENCES.path(psp)}"


async def post(
    ctx: ConnectorContext, operation: str, path: str, model: type[Answer], body: JsonObject, key: str
) -> Answer:
    """``body`` for the merchant account under our Idempotency-Key (at most 64 characters): its 201."""
    body = {"merchantAccount": ProviderDCredentials.of(ctx).merchant_account, **body}
    headers = {**headers_for(ctx), "Idempotency-Key": key[:64]}
    return await call(
        live(ctx), operation, "POST", path, model, headers=headers, refusals=wire.rejected, json=body,
        ok=frozenset({201}),
    )


_ENDS = {wire.CANCELLATION: HoldStatus.RELEASED, wire.CANCEL_OR_REFUND: HoldStatus.RELEASED}
_ENDS[wire.EXPIRE] = HoldStatus.LAPSED


class ProviderDHolds:
    """``/captures`` (all or part) and ``/cancels`` answer ``201 received``: the hold is read from words."""

    async def capture(self, ctx: ConnectorContext, hold: HoldRef, amount: int, key: str) -> HoldState:
        body: JsonObject = {"amount": {"value": amount, "currency": hold.currency}}
        return await self._modify(ctx, hold, body, key, amount)

    async def void(self, ctx: ConnectorContext, hold: HoldRef, key: str) -> HoldState:
        return await self._modify(ctx, hold, {}, key, None)

    async def read_hold(self, ctx: ConnectorContext, hold: HoldRef) -> HoldState:
        psp = hold.provider_reference
        words = await ctx.words.find(WordQuery(frozenset(_ENDS) | {wire.CAPTURE}, original_reference=psp))
        words += await ctx.words.find(WordQuery(frozenset({wire.EXPIRE}), reference=psp))
        if (word := standing(words)) is not None:
            return _state(hold, word)
        # Nothing done yet, or what was asked refused. A capture or cancel whose word is still
        # to come is safe to ask again: under its Idempotency-Key it is the same one.
        return HoldState(HoldStatus.HELD, details={"words": [w.event for w in words]})

    async def _modify(
        self, ctx: ConnectorContext, hold: HoldRef, body: JsonObject, key: str, capture: int | None
    ) -> HoldState:
        asked = ("capture", "captures", wire.CAPTURE) if capture is not None else None
        operation, action, event = asked or ("void", "cancels", wire.CANCELLATION)
        path = f"{_payment(hold.provider_reference)}/{action}"
        try:
            made = await post(ctx, operation, path, wire.Modification, {**body, "reference": key[:80]}, key)
        except base.ProviderRejected:
            if seen := await made_already(self, ctx, hold, capture):
                return seen
            raise
        said, psp = await latest(ctx.words, event, made.psp_reference), made.psp_reference
        return by_word(said, psp, operation, ctx.provider, lambda word: _state(hold, word))


def _state(hold: HoldRef, word: ProviderWord) -> HoldState:
    details = {"event": word.event, "psp_reference": word.reference}
    if word.event == wire.CAPTURE:
        captured = word.amount if word.amount is not None else hold.amount
        return HoldState(HoldStatus.CAPTURED, captured, hold.amount - captured, details)
    return HoldState(_ENDS[word.event], amount_released=hold.amount, details=details)
