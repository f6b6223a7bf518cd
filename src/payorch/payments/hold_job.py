"""Settle captures and voids whose provider answer is unknown (timeout, 5xx, a crash between the
provider's answer and payorch's commit): the worker job ``settle-holds``.

Claims payments whose ``hold_action`` is still set past its ``hold_action_check_at`` (FOR UPDATE
SKIP LOCKED on PostgreSQL, leased), reads the hold at the provider and applies what it says
(payments/holds.py ``settle``): captured, released, lapsed, or still held (the action never
happened: cleared, the merchant may try again). It never sends a capture or void itself.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from payorch.payments import hold_repository, holds, repository
from payorch.payments.refunds import refund_connector
from payorch.providers.base import ProviderCallError
from payorch.providers.holds import HoldStatus
from payorch.providers.registry import registration_of
from payorch.runtime import Runtime

log = logging.getLogger("payorch.worker.holds")
BATCH = 20


class SettleHoldActions:
    name = "settle-holds"
    interval = 5.0

    async def run_once(self, runtime: Runtime) -> int:
        now = runtime.clock.now()
        lease = now + timedelta(seconds=2 * runtime.settings.provider_timeout_seconds + 30)
        async with runtime.phases.transaction() as conn:
            ids = await hold_repository.claim_due(conn, now, lease, BATCH)
        for payment_id in ids:
            try:
                status = await settle_from_provider(runtime, payment_id)
            except Exception:
                log.exception("could not settle a hold", extra={"payment_id": payment_id})
                continue
            log.info("hold checked", extra={"payment_id": payment_id, "status": status})
        return len(ids)


async def settle_from_provider(
    runtime: Runtime, payment_id: str, *, keep_held: bool = False, unread_raises: bool = False
) -> str:
    """Read the payment's hold at the provider and apply it; the payment's status afterwards.
    ``keep_held``: a hold still held changes nothing (the deadline check, payments/lapse_job.py,
    must not clear a capture or void begun since it claimed the payment). ``unread_raises``: a
    read that fails raises ProviderCallError instead of leaving it to the next pass (a provider's
    notice is answered 503 then, so the provider sends it again)."""
    phases = runtime.phases
    async with phases.transaction() as conn:
        payment = await repository.get_any(conn, payment_id)
        if payment is None or payment.status != hold_repository.HELD:
            return payment.status if payment is not None else "MISSING"
        connector = await refund_connector(
            conn, runtime.cipher, payment.merchant_account_id, payment.provider
        )
    calls = registration_of(payment.provider).hold_calls
    if connector is None or calls is None:
        return payment.status
    try:
        state = await calls.read_hold(holds.context_of(runtime, connector), holds.hold_ref(payment))
    except ProviderCallError as exc:
        if unread_raises:
            raise
        log.warning("hold read failed: %s", exc.reason, extra={"payment_id": payment_id})
        return payment.status  # the lease runs out and the next pass asks again
    if state.status is HoldStatus.PENDING or (keep_held and state.status is HoldStatus.HELD):
        return payment.status  # PENDING: the provider's word on it is still to come
    async with phases.transaction() as conn:
        return (await holds.settle(conn, runtime, payment_id, state)).status
