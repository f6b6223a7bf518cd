"""What the second-chance page offers, and the checkout its button starts (docs/checkout.md,
"A second chance after a decline"). The intent decides, never the buyer's query string: an offer
exists while the intent is REQUIRES_ACTION and its last attempt was declined with a second
chance (routing/attempt_log.py)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime

from payorch.applications import service as applications
from payorch.auth.service import Caller
from payorch.checkouts import repository
from payorch.checkouts import service as checkouts
from payorch.checkouts.offer_expiry import offer_ends_at
from payorch.checkouts.schemas import CheckoutAction, CheckoutRequestBody, CheckoutResponse
from payorch.connectors import service as connectors
from payorch.errors import ConnectorNotConfigured, IdempotencyKeyInUse
from payorch.idempotency.records import IdempotentResult
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.intents.states import IntentStatus
from payorch.providers.registry import registration_of
from payorch.routing import decide as routing
from payorch.routing import service as routing_versions
from payorch.routing.attempt_log import attempts_of, excluding_declined, offer_pending
from payorch.runtime import Runtime

RETRY_CALLER = "checkout_retry"  # the credential id of the checkouts the page starts
WAIT_STEP_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class Offered:
    intent: PaymentIntent
    declined_by: str  # the provider's display name
    declined_checkout_id: str  # the button's: a stale page cannot start a second checkout
    next_provider: str | None  # the display name of the one the routing allows now
    merchant: str  # the merchant's name, as the payment link pages show it
    ends_at: datetime | None  # after it the button starts nothing (checkouts/offer_expiry.py)

    def over(self, now: datetime) -> bool:
        return self.ends_at is None or now >= self.ends_at


async def offered(runtime: Runtime, intent_id: str) -> tuple[PaymentIntent | None, Offered | None]:
    """The intent (None if unknown) and its pending offer (None if there is none)."""
    async with runtime.phases.reading() as conn:
        intent = await intents.find_intent(conn, intent_id) if intent_id.startswith("payi_") else None
        if intent is None or intent.status != IntentStatus.REQUIRES_ACTION.value:
            return intent, None
        pending = offer_pending(intent.routing)
        if pending is None:
            return intent, None
        merchant_connectors = await connectors.merchant_connectors(conn, intent.merchant_account_id)
        active = await routing_versions.active_program(conn, intent.merchant_account_id)
        merchants = await applications.list_merchants(conn, intent.application_id)
        declined = await repository.get(conn, str(pending["checkout_id"]))
    ends_at = None if declined is None else offer_ends_at(runtime, declined)
    merchant = next((m.name for m in merchants if m.id == intent.merchant_account_id), "")
    try:
        decision = await routing.decide(
            checkouts.routing_facts(intent),
            merchant_connectors,
            active,
            intent.requested_provider,
            runtime.success_rates,
            lambda connector: connectors.capture_methods_of(runtime.cipher, connector),
        )
        following = excluding_declined(decision, intent.routing).candidates
    except ConnectorNotConfigured:
        following = ()
    next_name = registration_of(following[0].provider).display_name if following else None
    declined_by = registration_of(str(pending["provider"])).display_name
    declined_id = str(pending["checkout_id"])
    return intent, Offered(intent, declined_by, declined_id, next_name, merchant, ends_at)


async def start_retry(runtime: Runtime, intent: PaymentIntent, declined_checkout_id: str) -> CheckoutAction:
    """The new checkout, through the merchant's routing without the providers that declined.
    Keyed by the declined checkout: a double click (or two tabs) makes one checkout, and both
    answer the same provider page."""
    async with runtime.phases.reading() as conn:
        application = await applications.find_application(conn, intent.application_id)
    assert application is not None  # an intent's application exists (foreign key)
    caller = Caller(intent.application_id, application.environment, RETRY_CALLER)
    path = f"/checkout-retry/{intent.id}"
    scope = runtime.idempotency.scope(intent.application_id, "POST", path, declined_checkout_id, {})
    deadline = time.monotonic() + 6 * runtime.settings.provider_timeout_seconds + 10
    while True:
        try:
            started = await checkouts.request_checkout(
                runtime, runtime.phases, caller, intent.id, CheckoutRequestBody(), scope
            )
            break
        except IdempotencyKeyInUse:  # the other click is starting it: wait for its answer
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(WAIT_STEP_SECONDS)
    if isinstance(started, IdempotentResult):
        return CheckoutResponse.model_validate_json(started.body).checkout
    return started.checkout


async def started_after(
    runtime: Runtime, intent: PaymentIntent, declined_checkout_id: str
) -> CheckoutAction | None:
    """The current checkout, if it is the one the retry after ``declined_checkout_id`` started."""
    attempts = attempts_of(intent.routing)
    ids = [a.get("checkout_id") for a in attempts]
    if intent.status != IntentStatus.REQUIRES_ACTION.value or ids[-2:-1] != [declined_checkout_id]:
        return None
    async with runtime.phases.reading() as conn:
        current = await repository.active_for_intent(conn, intent.id)
    if current is None or current.id != ids[-1]:
        return None
    return CheckoutAction(
        type="REDIRECT", url=current.url, method=current.method, fields=dict(current.fields)
    )
