"""What provider D's AUTHORISATION words and its session mean for a checkout: a refusal leaves the
session payable, so it ends the checkout only once the buyer has left the page."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from payorch.providers.base import CheckoutRef, PaymentOutcome, PaymentResult, ProviderUnavailable
from payorch.providers.provider_d import PROVIDER_D, wire
from payorch.providers.references import Claims, ignored
from payorch.providers.words import ProviderWord

MANUAL = "manual"
HOLD_WINDOW = timedelta(days=7)  # the registration's window_days: Adyen says "depends on the scheme"
# What a session's status says when no payment of it is authorised.
_ENDED = {
    wire.CANCELED: (PaymentOutcome.CANCELLED, "the buyer cancelled on the hosted page"),
    wire.EXPIRED: (PaymentOutcome.EXPIRED, "the session expired at the provider"),
    wire.PAYMENT_PENDING: (PaymentOutcome.PROCESSING, "the payment is in process at the provider"),
}


def reference_of(payment_intent_id: str, checkout_id: str) -> str:
    """Our merchant reference of a checkout's session: it comes back in every notification."""
    return f"{payment_intent_id}.{checkout_id}"


def auth_code(word: ProviderWord | None) -> str | None:
    """The issuer's code: a successful AUTHORISATION's reason is ``authCode:cardSummary:expiryDate``."""
    reason = word.reason if word is not None else None
    return (reason or "").split(":")[0] or None


def paid(
    checkout: CheckoutRef, psp: str, reference: str | None, amount: int | None, currency: str | None, *,
    word: ProviderWord | None, now: datetime | None = None, via: str = wire.AUTHORISATION,
) -> PaymentResult:
    """An authorised payment of ``checkout``, held or taken, at its word's time (none yet: ``now``)."""
    at = word.event_at if word is not None else now
    intent, _, checkout_id = (reference or "").partition(".")
    claims = Claims("merchantReference", intent or None, currency, amount, checkout_id or None)
    distrust = claims.mismatch(checkout)
    if distrust:
        return ignored(f"payment {psp} not trusted: {distrust}")
    held = checkout.provider_data.get("capture") == MANUAL
    return PaymentResult(
        PaymentOutcome.HELD if held else PaymentOutcome.AUTHORIZED,
        provider_payment_reference=psp,
        amount=amount,
        currency=currency,
        authorized_at=at,
        authorization_code=auth_code(word),
        capture_before=at + HOLD_WINDOW if held and at is not None else None,
        details={"authorised_by": via},
    )


def from_words(words: Sequence[ProviderWord], checkout: CheckoutRef) -> PaymentResult:
    """Paid, refused once the buyer has left the page, or nothing paid yet (``details``: why)."""
    word = next((w for w in reversed(words) if w.success), None)
    if word is not None:
        return paid(checkout, word.reference, word.merchant_reference, word.amount, word.currency, word=word)
    details = refused_words(words)
    if details and checkout.buyer_returned:  # the refusal's word came after the buyer
        return refused(details)
    return PaymentResult(PaymentOutcome.NOT_PAID, reason="no payment authorised yet", details=details)


def refused(details: dict[str, object]) -> PaymentResult:
    """The checkout ends refused (a payment made later on the still open session is given back)."""
    reason = details.get("refusal_reason") or "too many refused payment attempts"
    return PaymentResult(PaymentOutcome.FAILED, reason=f"refused: {reason}", details=details)


def from_session(
    session: wire.SessionResult, words: Sequence[ProviderWord], checkout: CheckoutRef, now: datetime | None
) -> PaymentResult:
    """As the session says (its ``payments`` are the authorised ones); the words say why one failed."""
    for payment in session.payments:
        psp, amount = payment.psp_reference, payment.amount
        if psp and payment.result_code in ("Authorised", None) and amount:
            word = next((w for w in reversed(words) if w.success and w.reference == psp), None)
            value, currency = amount.value, amount.currency
            return paid(checkout, psp, session.reference, value, currency, via="session", word=word, now=now)
    details = refused_words(words)
    if session.status == wire.REFUSED or (session.status == wire.ACTIVE and details):
        # Refused for good, or the buyer came back from the page after a refused attempt.
        return refused(details)
    if session.status in _ENDED:
        outcome, reason = _ENDED[session.status]
        return PaymentResult(outcome, reason=reason, details={"session_status": session.status})
    if session.status not in (wire.ACTIVE, wire.COMPLETED):  # a status the protocol does not name
        raise ProviderUnavailable(f"session status {session.status!r} unknown", provider=PROVIDER_D)
    # Active (the buyer may pay again), or completed with no payment listed yet: the words decide.
    found = from_words(words, checkout)
    if found.outcome is PaymentOutcome.NOT_PAID and session.status != wire.ACTIVE:
        reason = f"session {session.status}"
        return PaymentResult(PaymentOutcome.PROCESSING, reason=reason, details=found.details)
    return found


def refused_words(words: Sequence[ProviderWord]) -> dict[str, object]:
    failed = [w for w in words if not w.success]
    if not failed:
        return {}
    return {"refusal_reason": failed[-1].reason or "", "refused_attempts": len(failed)}

