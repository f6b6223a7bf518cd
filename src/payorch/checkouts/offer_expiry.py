"""A second chance nobody took (docs/checkout.md, "A second chance after a decline"): once the
checkout lifetime (PAYORCH_CHECKOUT_TTL_SECONDS) has passed since the declined checkout closed,
the intent ends FAILED with ``payment.failed`` and the decline's error, as if the merchant had
not opted in. Run by the ``checkout-expiry`` job (checkouts/expiry_job.py).

Race with the page's button: both decide under the intent's lock (FOR UPDATE on PostgreSQL,
BEGIN IMMEDIATE on SQLite). The button's checkout is recorded only while the intent is still
REQUIRES_ACTION with no open checkout (checkouts/service.py, _record); this ends only an intent
whose pending offer is still the last attempt with no open checkout. One of them finds the
other's result and does nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from payorch.checkouts import repository
from payorch.checkouts.records import Checkout
from payorch.events.catalogue import PaymentFailed, about
from payorch.events.catalogue_parts import LastPaymentError
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.intents.states import IntentStatus, Move
from payorch.routing.attempt_log import offer_pending
from payorch.runtime import Runtime

BATCH = 20
REASON = "The buyer did not try again within the checkout lifetime after the decline."


def offer_lifetime(runtime: Runtime) -> timedelta:
    return timedelta(seconds=runtime.settings.checkout_ttl_seconds)


def offer_ends_at(runtime: Runtime, declined: Checkout) -> datetime | None:
    """When the offer made after ``declined`` (closed) ends; None if it is not closed."""
    return None if declined.closed_at is None else declined.closed_at + offer_lifetime(runtime)


def offer_ended(intent: PaymentIntent) -> bool:
    """The intent ended FAILED while a second chance was pending (this job ended it)."""
    return intent.status == IntentStatus.FAILED.value and offer_pending(intent.routing) is not None


async def end_stale_offers(runtime: Runtime) -> int:
    """End up to BATCH offers past their end; answer how many ended."""
    now = runtime.clock.now()
    cutoff = now - offer_lifetime(runtime)
    async with runtime.phases.reading() as conn:
        found = await repository.stale_offer_intents(conn, closed_before=cutoff, limit=BATCH)
    ended = 0
    for intent_id in found:
        async with runtime.phases.transaction() as conn:
            intent = await intents.find_intent(conn, intent_id, for_update=True)
            if intent is None or intent.status != IntentStatus.REQUIRES_ACTION.value:
                continue  # the button's checkout was paid or failed, or another worker ended it
            pending = offer_pending(intent.routing)
            if pending is None or await repository.active_for_intent(conn, intent.id) is not None:
                continue  # the button started a checkout first
            declined = await repository.get(conn, str(pending.get("checkout_id")))
            ends = None if declined is None else offer_ends_at(runtime, declined)
            if ends is None or ends > now:
                continue
            error = intent.last_payment_error
            why = None if error is None else LastPaymentError.model_validate(error)
            provider = str(pending.get("provider"))
            failed = PaymentFailed(**about(intent), provider=provider, reason=REASON, last_payment_error=why)
            await intents.apply_move(conn, runtime.clock, intent, Move.FAIL, failed)
            ended += 1
    return ended
