"""A link's slots: "Pay" takes one of ``max_payments`` before the intent exists, so two buyers
paying the last slot at once cannot both pay.

A slot is held by each of the link's intents that is paid (``PAID``) or may still become paid:
its checkout is running or in process (REQUIRES_ACTION, PROCESSING), the provider holds the money
(REQUIRES_CAPTURE), or "Pay" has just made it (CREATED, for one checkout lifetime: an intent
whose checkout was never started cannot be paid, and must not hold a slot for ever). A slot held
by a running checkout frees itself when the intent fails, is cancelled or expires: the checkout
expiry job ends it once the provider confirms no payment exists (payorch.checkouts.expiry_job),
so a buyer who pays at the last second still holds the slot they took.

Counting and making the intent happen in one transaction behind a lock on the link's row
(``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's single writer, BEGIN IMMEDIATE, does the same),
so the second of two simultaneous "Pay" sees the first one's intent."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.intents.states import IntentStatus
from payorch.links import repository
from payorch.links.records import PAID, LinkStatus, PaymentLink

RUNNING = (IntentStatus.REQUIRES_ACTION, IntentStatus.PROCESSING, IntentStatus.REQUIRES_CAPTURE)
HELD = tuple(status.value for status in (*PAID, *RUNNING))


async def take(
    conn: AsyncConnection, link_id: str, now: datetime, checkout_ttl: timedelta
) -> PaymentLink | None:
    """The link, locked, when it is ACTIVE and has a free slot; None otherwise. The caller makes
    the intent in the same transaction: that intent is the slot."""
    link = await repository.lock(conn, link_id)
    if link is None or link.status != LinkStatus.ACTIVE:
        return None
    if link.expires_at is not None and link.expires_at <= now:
        return None
    held = await repository.count_holding(conn, link_id, HELD, created_since=now - checkout_ttl)
    return link if held < link.max_payments else None
