"""Ask the provider about an intent's current checkout and apply the answer, one actor at a time.

Returns, notifications and the worker all go through here. Before calling the provider the
actor takes a lease on the checkout row (a compare-and-set), so two racing returns make one
commit and one authorization; the others wait for the lease, then see the moved intent. The
provider is called with no transaction open; the answer is applied in a new transaction that
re-reads the intent (FOR UPDATE) and releases the lease.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from payorch.checkouts import repository, second_chance
from payorch.checkouts.provider_calls import context_for, lease_length, ref_of
from payorch.checkouts.records import Checkout, CheckoutStatus
from payorch.checkouts.transitions import apply_result
from payorch.connectors import service as connectors
from payorch.connectors.records import Connector
from payorch.db import Phases
from payorch.intents import service as intents
from payorch.intents.records import PaymentIntent
from payorch.intents.states import IntentStatus
from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    PaymentOutcome,
    PaymentResult,
    ProviderCallError,
)
from payorch.providers.registry import get_adapter
from payorch.runtime import Runtime
from payorch.success_rates.observe import observe

ProviderCall = Callable[[ConnectorContext, CheckoutRef], Awaitable[PaymentResult]]
WAIT_STEP_SECONDS = 0.05
STOPPED_ENDS = (IntentStatus.FAILED, IntentStatus.CANCELLED)
LEFT_OPEN = (PaymentOutcome.NOT_PAID, PaymentOutcome.PROCESSING)
log = logging.getLogger("payorch.checkouts")


class CheckoutBusy(Exception):
    """Another actor held the checkout's lease for longer than a confirmation may take."""


async def confirm_current_checkout(
    runtime: Runtime,
    phases: Phases,
    intent_id: str,
    call: ProviderCall,
    *,
    statuses: tuple[str, ...],
    provider: str | None = None,
    connector: Connector | None = None,
    buyer_return: bool = False,
    busy_raises: bool = False,
) -> PaymentIntent | None:
    """Run ``call`` on the intent's ACTIVE checkout if the intent is in ``statuses`` (and the
    checkout matches ``provider`` / is ``connector``'s, an intent of its application); answer
    the intent as it is afterwards (None if unknown). ProviderUnavailable propagates, with the
    lease released. ``buyer_return``: ``call`` confirms the buyer's return (CheckoutRef.buyer_returned).
    ``busy_raises``: CheckoutBusy if another actor held the checkout past the wait (a notification
    answers 503 then, so the provider sends it again), instead of the intent as it is."""
    deadline = time.monotonic() + lease_length(runtime).total_seconds()
    while True:
        # Reads, then the lease's compare-and-set: each atomic alone, no transaction around them.
        async with phases.each_statement() as conn:
            intent = await intents.find_intent(conn, intent_id)
            if intent is None:
                return None
            if connector is not None and intent.application_id != connector.application_id:
                return None  # another application's intent: not this connector's to confirm
            if intent.status not in statuses:  # moved already (often by the return or notice)
                return intent
            checkout = await repository.active_for_intent(conn, intent_id)
            if (
                checkout is None
                or (provider is not None and checkout.provider != provider)
                or (connector is not None and checkout.connector_id != connector.id)
            ):
                # Read again: on PostgreSQL each statement here has its own snapshot, so a move
                # that committed between the two reads (its checkout closed with it) is in the
                # intent only now. The first read's intent sent a buyer declined with a second
                # chance to the shop (tests/checkouts/test_return_between_reads.py).
                return await intents.find_intent(conn, intent_id)
            now = runtime.clock.now()
            if await repository.take_lease(conn, checkout.id, now, now + lease_length(runtime)):
                if connector is None:  # a notification's caller has it already
                    connector = await connectors.find_connector(conn, checkout.connector_id)
                break
        if time.monotonic() > deadline:
            if busy_raises:
                raise CheckoutBusy(checkout.id)
            return intent  # the holder is stuck; its lease will run out and someone else settles it
        await asyncio.sleep(WAIT_STEP_SECONDS)
    assert connector is not None
    return await call_and_apply(runtime, phases, intent, checkout, connector, call, buyer_return=buyer_return)


async def call_and_apply(
    runtime: Runtime,
    phases: Phases,
    intent: PaymentIntent,
    checkout: Checkout,
    connector: Connector,
    call: ProviderCall,
    *,
    buyer_return: bool = False,
) -> PaymentIntent:
    """With the lease held: call the provider (no transaction), apply, release the lease."""
    try:
        result = await call(context_for(runtime, connector), ref_of(checkout, intent))
    except BaseException:
        async with phases.transaction() as conn:
            await repository.release_lease(conn, checkout.id)
        raise
    async with phases.transaction() as conn:
        fresh = await intents.find_intent(conn, intent.id, for_update=True)
        current = await repository.get(conn, checkout.id)
        assert fresh is not None and current is not None
        after = await apply_result(conn, runtime.clock, fresh, current, result, release_lease=True)
        if buyer_return and result.outcome in LEFT_OPEN:
            # The provider confirmed the return and the checkout stays open: remember the buyer
            # left the page, so the provider's later word on a refusal ends it.
            await repository.mark_buyer_returned(conn, current.id, runtime.clock.now())
    await observe(runtime.success_rates, fresh, after, current.provider)
    stopped = after.status != fresh.status and after.status in STOPPED_ENDS
    if stopped or second_chance.newly_offered(fresh, after):
        await _stop_at_provider(runtime, after, current, connector)
    return after


async def _stop_at_provider(
    runtime: Runtime,
    intent: PaymentIntent,
    checkout: Checkout,
    connector: Connector,
) -> None:
    """FAILED and CANCELLED are final states of the intent: make sure the buyer cannot pay the same
    checkout afterwards (provider B lets a buyer retry on a preference after a rejection)."""
    try:
        stopped = await get_adapter(checkout.provider).cancel_checkout(
            context_for(runtime, connector), ref_of(checkout, intent)
        )
    except ProviderCallError as exc:
        log.warning("could not stop checkout %s at the provider: %s", checkout.id, exc.reason)
        return
    if stopped.outcome is PaymentOutcome.AUTHORIZED:
        log.error(
            "checkout %s: the provider reports a payment after the intent became %s",
            checkout.id,
            intent.status,
        )


async def lease_checkout(runtime: Runtime, phases: Phases, checkout_id: str) -> bool:
    """Take the checkout's lease, waiting for a holder to finish (bounded); False if it is no
    longer ACTIVE or the holder did not finish in time."""
    deadline = time.monotonic() + lease_length(runtime).total_seconds()
    while True:
        async with phases.each_statement() as conn:  # a read, then the lease's compare-and-set
            checkout = await repository.get(conn, checkout_id)
            if checkout is None or checkout.status is not CheckoutStatus.ACTIVE:
                return False
            now = runtime.clock.now()
            if await repository.take_lease(conn, checkout_id, now, now + lease_length(runtime)):
                return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(WAIT_STEP_SECONDS)


async def release(phases: Phases, checkout_id: str) -> None:
    async with phases.transaction() as conn:
        await repository.release_lease(conn, checkout_id)
