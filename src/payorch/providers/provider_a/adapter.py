"""provider_a_redirect_post: a card provider whose checkout is a POST redirect (Webpay Plus 1.2).

Quirks kept here:
- buy_order is derived from the intent id (its last 26 characters: the random part and most of
  the timestamp), so a retried create for the same intent carries the same order.
  session_id is an HMAC of the checkout id under the connector's api_key: deterministic, yet
  nobody but the provider and the buyer of that checkout can know it, so a "timeout" return
  (which carries no token) cannot be forged from the intent id alone.
- The buyer's return comes in four shapes, and the provider is asked about every one before
  anything moves (the browser's parameters only say which checkout it claims to be):
  normal (token_ws alone, this checkout's token): commit, which answers the transaction;
  abort (TBK_TOKEN, with or without TBK_ORDEN_COMPRA/TBK_ID_SESION), timeout
  (TBK_ORDEN_COMPRA + TBK_ID_SESION) and error page (token_ws + TBK_TOKEN): read the status
  (GET /transactions/{token}) first. Authorized -> committed like a normal end (AUTHORIZED);
  FAILED (nothing paid) -> CANCELLED / EXPIRED / FAILED as the shape says; still INITIALIZED
  (the buyer may be paying) or unknown -> nothing moves (expiry or reconciliation settles it).
  So a forged or replayed abort cannot cancel a paid checkout.
- Commit works once per token. An unknown commit outcome (timeout, 5xx, garbage) is PROCESSING
  and ``read_status`` settles it; a 422 on commit (already committed, aborted, late) is answered
  by reading the status instead.
- Refunds are not idempotent at the provider: an unknown refund outcome is read back from the
  transaction's balance (``read_refund``), never retried blindly.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping
from datetime import timedelta

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
    ProviderUnavailable,
    RefundRequest,
)
from payorch.providers.calls import call
from payorch.providers.http import parse, send
from payorch.providers.provider_a import PROVIDER_A, wire
from payorch.providers.provider_a.credentials import (
    MOCK_DEFERRED_SUFFIX,
    ProviderACredentials,
    capture_methods,
)
from payorch.providers.provider_a.payment_results import CURRENCY, result_of
from payorch.providers.provider_a.refusals import error_message, refund_reason, rejected
from payorch.providers.references import ignored, same
from payorch.providers.refund_results import from_refunded_total

MANUAL = "manual"
BASE_URLS = {
    Mode.SANDBOX: "https://webpay3gint.transbank.cl",
    Mode.PRODUCTION: "https://webpay3g.transbank.cl",
}


def buy_order_for(payment_intent_id: str) -> str:
    """The intent's buy_order: deterministic, at most 26 characters of the allowed set."""
    tail = payment_intent_id[-wire.BUY_ORDER_MAX :]
    if not wire.BUY_ORDER_CHARSET.match(tail):
        tail = re.sub(r"[^A-Za-z0-9]", "", payment_intent_id)[-wire.BUY_ORDER_MAX :]
    return tail


def session_id_for(ctx: ConnectorContext, checkout_id: str) -> str:
    """The checkout's session_id (40 hex characters, within the provider's 61)."""
    key = ProviderACredentials.of(ctx).api_key.get_secret_value().encode()
    return hmac.new(key, b"session:" + checkout_id.encode(), hashlib.sha256).hexdigest()[:40]


class ProviderAAdapter(AdapterIdentity):
    provider_id = PROVIDER_A
    simulator_name = "provider_a"
    supports_notifications = False
    supported_currencies = frozenset({CURRENCY})
    adds_status_to_return = False
    provider_urls = BASE_URLS

    # -- create -------------------------------------------------------------------------------

    async def create_checkout(self, ctx: ConnectorContext, request: CheckoutRequest) -> CheckoutSession:
        if request.currency != CURRENCY:
            raise ProviderRejected(
                f"{PROVIDER_A} charges only {CURRENCY}, not {request.currency}", provider=PROVIDER_A
            )
        session_id = session_id_for(ctx, request.checkout_id)
        manual = request.capture_method == MANUAL
        if request.capture_method not in capture_methods(ctx.mode, ctx.credentials):
            # Routing sends none (routing/decide.py); a commerce code captures one way only.
            raise ProviderRejected(
                f"{PROVIDER_A}: this connector's commerce code "
                + ("captures at once" if manual else "is configured for deferred capture (it holds)")
                + f"; capture_method {request.capture_method} needs "
                + ("one configured for deferred capture" if manual else "one that captures at once"),
                provider=PROVIDER_A,
            )
        body = wire.CreateTransaction(
            buy_order=buy_order_for(request.payment_intent_id),
            session_id=session_id,
            amount=request.amount,
            return_url=request.return_url,
        )
        created = await call(
            ctx,
            "create",
            "POST",
            wire.TRANSACTIONS,
            wire.CreatedTransaction,
            headers=headers_for(ctx, deferred=manual),
            refusals=rejected,
            json=body.model_dump(),
        )
        token_expiry = ctx.clock.now() + timedelta(seconds=wire.TOKEN_LIFETIME_SECONDS)
        return CheckoutSession(
            url=created.url,
            method="POST",
            fields={wire.TOKEN_WS: created.token},
            provider_reference=created.token,
            expires_at=min(request.expires_at, token_expiry),
            provider_data={
                "buy_order": body.buy_order,
                "session_id": session_id,
                **({"capture_method": MANUAL} if manual else {}),
            },
        )

    # -- the buyer's return ---------------------------------------------------------------------

    async def confirm_return(
        self, ctx: ConnectorContext, checkout: CheckoutRef, params: Mapping[str, str]
    ) -> PaymentResult:
        token = checkout.provider_reference
        token_ws = params.get(wire.TOKEN_WS) or None
        tbk_token = params.get(wire.TBK_TOKEN) or None
        order = params.get(wire.TBK_ORDEN_COMPRA) or None
        session = params.get(wire.TBK_ID_SESION) or None
        buy_order = checkout.provider_data.get("buy_order") or buy_order_for(checkout.payment_intent_id)
        session_id = checkout.provider_data.get("session_id") or session_id_for(ctx, checkout.checkout_id)

        if token_ws and tbk_token:  # error page, then "back to shop"
            if not (same(token_ws, token) or same(tbk_token, token)):
                return ignored("the return's token is not this checkout's")
            return await self._unless_paid(
                ctx, checkout, PaymentOutcome.FAILED, "the provider showed an error page", "error"
            )
        if token_ws:  # normal end: commit to learn the result
            if order or session:
                return ignored("unrecognised return shape")
            if not same(token_ws, token):
                return ignored("the return's token is not this checkout's")
            return await self._commit(ctx, checkout)
        if tbk_token:  # the buyer aborted (or says so)
            if not same(tbk_token, token) or (order is not None and not same(order, buy_order)):
                return ignored("the return's token is not this checkout's")
            return await self._unless_paid(
                ctx, checkout, PaymentOutcome.CANCELLED, "the buyer cancelled at the provider", "aborted"
            )
        if order and session:  # the payment form timed out (or says so)
            if not (same(order, buy_order) and same(session, session_id)):
                return ignored("the return's order or session is not this checkout's")
            return await self._unless_paid(
                ctx, checkout, PaymentOutcome.EXPIRED, "the payment form timed out", "timeout"
            )
        return ignored("unrecognised return shape")

    async def _unless_paid(
        self, ctx: ConnectorContext, checkout: CheckoutRef, ending: PaymentOutcome, reason: str, shape: str
    ) -> PaymentResult:
        """An abort/timeout/error return is only the browser's word: the status decides."""
        seen = await self.read_status(ctx, checkout)  # commits an approval it finds
        details = {**seen.details, "return_shape": shape}
        if seen.outcome in (PaymentOutcome.AUTHORIZED, PaymentOutcome.PROCESSING):
            return seen  # paid after all (committed now), or the commit's outcome is unknown
        if seen.outcome is PaymentOutcome.FAILED:  # the provider says nothing was paid
            token = checkout.provider_reference
            return PaymentResult(ending, token, reason=reason, details=details)
        # INITIALIZED (the buyer may still be paying), unknown or not ours: nothing moves.
        return PaymentResult(
            PaymentOutcome.NOT_PAID if seen.outcome is PaymentOutcome.NOT_PAID else PaymentOutcome.IGNORED,
            checkout.provider_reference,
            reason=f"the provider has not ended the payment ({seen.reason}); return ignored",
            details=details,
        )

    async def _commit(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        path = f"{wire.TRANSACTIONS}/{checkout.provider_reference}"
        try:
            response = await send(ctx, "commit", "PUT", path, headers=headers_for(ctx))
            if response.status_code == 200:
                status = parse(wire.TransactionStatus, response, "commit", PROVIDER_A)
                return result_of(ctx, checkout, status)
        except ProviderUnavailable as exc:
            # The commit may or may not have happened: reconciliation reads the status later.
            return PaymentResult(
                outcome=PaymentOutcome.PROCESSING,
                provider_payment_reference=checkout.provider_reference,
                reason=f"commit outcome unknown: {exc.reason}",
            )
        if response.status_code == 422:
            # Already committed (a racing return), aborted or late: the status says which.
            return await self._read_transaction(ctx, checkout)
        raise rejected("commit", response)

    # -- status, cancel ---------------------------------------------------------------------------

    async def read_status(
        self, ctx: ConnectorContext, checkout: CheckoutRef, *, payment_reference: str | None = None
    ) -> PaymentResult:
        """The transaction's status; an approval it shows is committed on sight (commit-or-lapse:
        an approval nobody commits within the provider's window is reversed, so whoever finds
        one, be it the return, reconciliation, expiry, a cancel or a replacement, commits it and
        payorch's record always matches the money). A second commit answers 422 and the status
        is read again, so an already committed token costs one more call, never a charge."""
        seen = await self._read_transaction(ctx, checkout)
        if seen.outcome is PaymentOutcome.AUTHORIZED and seen.details.get("status") == wire.AUTHORIZED:
            return await self._commit(ctx, checkout)
        return seen

    def status_lifetime(self) -> timedelta:
        """How long after create ``status`` answers (reconciliation stops asking after it)."""
        return timedelta(days=wire.STATUS_DAYS)

    async def _read_transaction(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        path = f"{wire.TRANSACTIONS}/{checkout.provider_reference}"
        response = await send(ctx, "status", "GET", path, headers=headers_for(ctx))
        if response.status_code == 200:
            status = parse(wire.TransactionStatus, response, "status", PROVIDER_A)
            return result_of(ctx, checkout, status)
        if response.status_code in (404, 422):
            # A definite "nothing to report" for our own token (never committed, aborted,
            # expired): no payment exists.
            return PaymentResult(
                outcome=PaymentOutcome.NOT_PAID,
                provider_payment_reference=checkout.provider_reference,
                reason=error_message(response) or f"status answered {response.status_code}",
                details={"http_status": response.status_code},
            )
        raise rejected("status", response)

    async def cancel_checkout(self, ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        # A token cannot be expired at this provider. Reading its status commits an approval
        # found (the provider wins, read_status); otherwise nothing was charged, and a return
        # arriving later for a replaced or cancelled checkout is IGNORED (never committed).
        return await self.read_status(ctx, checkout)

    # -- refunds ----------------------------------------------------------------------------------

    async def refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        if request.currency != CURRENCY:
            raise ProviderRejected(f"{PROVIDER_A} refunds only {CURRENCY}", provider=PROVIDER_A)
        path = f"{wire.TRANSACTIONS}/{request.provider_payment_reference}/refunds"
        body = wire.RefundTransaction(amount=request.amount)
        answer = await call(
            ctx,
            "refund",
            "POST",
            path,
            wire.ProviderARefundAnswer,
            headers=headers_for(ctx),
            refusals=rejected,
            json=body.model_dump(),
        )
        details = {"type": answer.type, "balance": answer.balance}
        if answer.type == wire.REVERSED:
            return ProviderRefundResult(ProviderRefundOutcome.SUCCEEDED, request.amount, details=details)
        if answer.type in (wire.NULLIFIED, wire.PARTIALLY_NULLIFIED):
            code = answer.response_code
            if code not in (None, 0):
                raise ProviderRejected(
                    refund_reason(code, None), provider=PROVIDER_A, code=str(code), status_code=200
                )
            return ProviderRefundResult(
                ProviderRefundOutcome.SUCCEEDED,
                answer.nullified_amount if answer.nullified_amount is not None else request.amount,
                provider_refund_reference=answer.authorization_code,
                details=details,
            )
        raise ProviderUnavailable(f"refund: unknown answer type {answer.type!r}", provider=PROVIDER_A)

    async def read_refund(self, ctx: ConnectorContext, request: RefundRequest) -> ProviderRefundResult:
        """From the transaction's balance: lower by the refund -> SUCCEEDED, unchanged ->
        NOT_APPLIED, anything else -> PENDING (ask again later)."""
        path = f"{wire.TRANSACTIONS}/{request.provider_payment_reference}"
        status = await call(
            ctx, "status", "GET", path, wire.TransactionStatus, headers=headers_for(ctx), refusals=rejected
        )
        balance = status.balance
        if status.status in (wire.REVERSED, wire.NULLIFIED) and balance is None:
            balance = 0
        refunded = request.payment_amount - balance if balance is not None else None
        return from_refunded_total(request, refunded, {"status": status.status, "balance": balance})

    # -- notifications ----------------------------------------------------------------------------

    async def parse_notification(
        self, ctx: ConnectorContext, notification: IncomingNotification
    ) -> NotificationRef:
        raise InvalidNotification(f"{PROVIDER_A} sends no notifications")


# ---------------------------------------------------------------------------------------------


def headers_for(ctx: ConnectorContext, *, deferred: bool = False) -> dict[str, str]:
    """The connector's keys; ``deferred``: a MOCK connector's deferred-capture commerce code (the
    simulator knows the application's two codes; it decides at create whether a transaction is
    held, and any of the application's codes may act on it afterwards)."""
    credentials = ProviderACredentials.of(ctx)
    # Another mode's commerce code is configured one way: the connector's own code, always.
    mock_deferred = deferred and ctx.mode is Mode.MOCK
    code = credentials.commerce_code + (MOCK_DEFERRED_SUFFIX if mock_deferred else "")
    return {
        "Tbk-Api-Key-Id": code,
        "Tbk-Api-Key-Secret": credentials.api_key.get_secret_value(),
        "Content-Type": "application/json",
    }
