"""Checkout expiry: a REQUIRES_ACTION intent whose checkout's time ran out becomes EXPIRED,
but only after its provider confirms that no payment exists (a last-second payment wins).

Per due checkout: read the provider's status; a payment found is applied like a return would
(AUTHORIZED, PROCESSING, FAILED...); no payment -> stop the checkout at the provider
(cancel_checkout) and, if it confirms, EXPIRE. Provider unreachable -> try again later.
Also ends second chances nobody took within the checkout lifetime (checkouts/offer_expiry.py).
"""

from __future__ import annotations

import logging

from payorch.checkouts import repository
from payorch.checkouts.confirm import ProviderCall, call_and_apply
from payorch.checkouts.offer_expiry import end_stale_offers
from payorch.checkouts.provider_calls import lease_length
from payorch.checkouts.records import CheckoutStatus
from payorch.checkouts.transitions import reconcile_delay
from payorch.connectors import service as connectors
from payorch.db import Phases
from payorch.intents import service as intents
from payorch.intents.states import IntentStatus
from payorch.observability.metrics import record_reconciliation_left_open
from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    PaymentOutcome,
    PaymentResult,
    ProviderCallError,
)
from payorch.providers.registry import get_adapter
from payorch.runtime import Runtime

log = logging.getLogger("payorch.worker.expiry")  # the name operators know (operations.md)
BATCH = 20


async def check_due(
    runtime: Runtime,
    phases: Phases,
    intent_statuses: tuple[str, ...],
    decide: ProviderCall,
    *,
    within_status_lifetime: bool = False,
) -> int:
    """Claim due checkouts (lease) and run ``decide`` on each; reschedule what is not final.
    ``within_status_lifetime``: a checkout older than its provider's status lifetime is not
    asked about any more (it is left as it is, for an operator)."""
    now = runtime.clock.now()
    async with phases.transaction() as conn:
        claimed = await repository.claim_due(
            conn,
            intent_statuses=intent_statuses,
            now=now,
            lease_until=now + lease_length(runtime),
            limit=BATCH,
            skip_locked=not phases.is_sqlite,
        )
        rows = []
        for checkout in claimed:
            intent = await intents.find_intent(conn, checkout.payment_intent_id)
            connector = await connectors.find_connector(conn, checkout.connector_id)
            if intent is not None and connector is not None:  # foreign keys: always there
                rows.append((checkout, intent, connector))
    for checkout, intent, connector in rows:
        lifetime = get_adapter(checkout.provider).status_lifetime()
        if within_status_lifetime and lifetime is not None and now > checkout.created_at + lifetime:
            log.error(
                "checkout %s: the provider no longer answers about it (created %s); the intent "
                "stays %s and is not asked about again",
                checkout.id,
                checkout.created_at,
                intent.status,
            )
            async with phases.transaction() as conn:
                await repository.stop_checking(conn, checkout.id)
            record_reconciliation_left_open(checkout.provider)
            continue
        try:
            await call_and_apply(runtime, phases, intent, checkout, connector, decide)
        except ProviderCallError as exc:
            log.warning("checkout %s: provider unavailable (%s); later", checkout.id, exc.reason)
        except Exception:  # noqa: BLE001 - one bad row must not stop the batch
            log.exception("checkout %s: check failed; later", checkout.id)
        async with phases.transaction() as conn:
            # Still ACTIVE and not settled: look again after the backoff.
            current = await repository.get(conn, checkout.id)
            if current is not None and current.status is CheckoutStatus.ACTIVE:
                delay = reconcile_delay(max(0, current.check_attempts - 1))
                await repository.reschedule(conn, checkout.id, runtime.clock.now() + delay)
    return len(rows)


async def _expire_decision(ctx: ConnectorContext, ref: CheckoutRef) -> PaymentResult:
    adapter = get_adapter(ctx.provider)
    seen = await adapter.read_status(ctx, ref)
    if seen.outcome not in (PaymentOutcome.NOT_PAID, PaymentOutcome.EXPIRED):
        return seen  # a payment exists (or a definite end): it wins over the expiry
    stopped = await adapter.cancel_checkout(ctx, ref)
    if stopped.outcome in (PaymentOutcome.NOT_PAID, PaymentOutcome.EXPIRED):
        return PaymentResult(PaymentOutcome.EXPIRED, reason="The checkout expired.")
    return stopped


class ExpireCheckouts:
    name = "checkout-expiry"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        phases = runtime.phases
        statuses = (IntentStatus.REQUIRES_ACTION.value,)
        checked = await check_due(runtime, phases, statuses, _expire_decision)
        return checked + await end_stale_offers(runtime)  # second chances nobody took
