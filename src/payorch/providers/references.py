"""What a buyer's return or a provider's notification names, checked before anything is read
with it (docs/providers.md, "Writing an adapter").

A return's parameters and a notice's body prove nothing: they only say which provider object to
read. So an adapter first checks that what they name is this checkout's (``same``: in constant
time, an absent or empty value never matches) and that an id it will put in a URL has the
provider's shape (``ProviderIds``); a return that is not this checkout's is answered ``ignored``
without calling the provider. An object read from the provider is believed only once what it
says of its checkout (``Claims``: our intent id, currency, amount, checkout) matches.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping
from dataclasses import dataclass

from payorch.providers.base import CheckoutRef, PaymentOutcome, PaymentResult


def same(presented: str | None, expected: str | None) -> bool:
    """Whether a presented reference is ours, compared in constant time (a reference can be the
    secret that proves a return is real). Nothing presented, or nothing to compare with: no."""
    if not presented or not expected:
        return False
    return hmac.compare_digest(presented.encode(), expected.encode())


class ProviderIds:
    """The shape of one provider's ids: what may travel in our URL paths and queries."""

    def __init__(self, pattern: str) -> None:
        self.pattern = re.compile(pattern)

    def valid(self, value: str | None) -> bool:
        return value is not None and self.pattern.fullmatch(value) is not None

    def path(self, value: str) -> str:
        """``value``, for a URL path; ValueError when it is not an id of the provider's shape (a
        stored reference always is: this guards against building a path from anything else)."""
        if not self.valid(value):
            raise ValueError("not a provider id")
        return value


@dataclass(frozen=True, slots=True)
class Claims:
    """What a provider's object (a payment, a session) says of the checkout it was made for, as
    its package reads it."""

    reference_field: str  # the provider's name of the field carrying our intent id (for the reason)
    payment_intent_id: str | None
    currency: str | None  # as the provider gives it; compared with the checkout's ISO code
    amount: int | None  # minor units; None: it shows none (or none in whole minor units)
    checkout_id: str | None = None  # None: the object does not say

    def mismatch(self, checkout: CheckoutRef) -> str | None:
        """Why the object is not ``checkout``'s (None: it is): another intent, currency, amount or
        checkout of the same intent (a replaced one)."""
        if self.payment_intent_id != checkout.payment_intent_id:
            return f"{self.reference_field} differs"
        if self.currency != checkout.currency:
            return "currency differs"
        if self.amount != checkout.amount:
            return "amount differs"
        if self.checkout_id is not None and self.checkout_id != checkout.checkout_id:
            return "made for another checkout"
        return None


def ignored(reason: str, details: Mapping[str, object] | None = None) -> PaymentResult:
    """The answer to a return or notice that is not this checkout's: nothing moves."""
    return PaymentResult(outcome=PaymentOutcome.IGNORED, reason=reason, details=dict(details or {}))
