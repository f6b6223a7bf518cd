"""A second chance after a soft decline (docs/routing.md, "A second chance after a decline").

When the provider's own answer declines with a code its package calls retryable, the merchant's
active routing program opted in (``on_decline``), attempts are left and a provider that has not
declined this intent is next in the decision, the intent stays REQUIRES_ACTION and the buyer is
offered that provider (checkouts/retry_page.py). Anything else ends FAILED as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.intents.records import PaymentIntent
from payorch.providers.payment_errors import ProviderError
from payorch.routing import service as routing_versions
from payorch.routing.attempt_log import attempts_of, declined_providers, offer_pending


@dataclass(frozen=True, slots=True)
class Offer:
    attempt: int  # the declined checkout's number, from 1
    max_attempts: int
    next_provider: str


async def offer_for(
    conn: AsyncConnection, intent: PaymentIntent, provider: str, error: ProviderError | None
) -> Offer | None:
    """The second chance to offer after ``provider`` declined with ``error``; None: end FAILED."""
    if error is None or not error.retryable:
        return None
    active = await routing_versions.active_program(conn, intent.merchant_account_id)
    on_decline = active.program.on_decline if active is not None else None
    if on_decline is None or not on_decline.retry:
        return None
    attempt = len(declined_providers(intent.routing)) + 1
    if attempt >= on_decline.max_attempts or not attempts_of(intent.routing):
        return None
    declined = {*declined_providers(intent.routing), provider}
    listed = (intent.routing or {}).get("candidates")
    candidates = (
        [c.get("provider") for c in listed if isinstance(c, dict)] if isinstance(listed, list) else []
    )
    following = next((str(c) for c in candidates if c and c not in declined), None)
    if following is None:
        return None
    return Offer(attempt, on_decline.max_attempts, following)


def newly_offered(before: PaymentIntent, after: PaymentIntent) -> bool:
    """A second chance was offered between ``before`` and ``after`` (its checkout just closed)."""
    return offer_pending(after.routing) is not None and offer_pending(before.routing) is None
