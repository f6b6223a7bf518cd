"""What a buyer's return or a provider's notification names, checked before anything is read
with it (docs/providers.md, "Writing an adapter").

A return's parameters and a notice's body prove nothing: they only say which provider object to
read. So an adapter first checks that what they name is this checkout's (``same``: in constant
time, an absent or empty value never matches) and that an id it will put in a URL has the
provider's shape (``ProviderIds``); a return that is not this checkout's is answered ``ignored``
without calling the provider.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping

from payorch.providers.base import PaymentOutcome, PaymentResult


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


def ignored(reason: str, details: Mapping[str, object] | None = None) -> PaymentResult:
    """The answer to a return or notice that is not this checkout's: nothing moves."""
    return PaymentResult(outcome=PaymentOutcome.IGNORED, reason=reason, details=dict(details or {}))
