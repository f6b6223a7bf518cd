"""The buyer's return from a provider, and provider notifications.

Neither is proof of anything: both only tell us which provider call to make. The result is
confirmed server-side (confirm.py) and applied; then the buyer is sent to the consumer's
return_url (303) and the provider gets its 200.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.checkouts import repository as checkouts
from payorch.checkouts.confirm import CheckoutBusy, confirm_current_checkout
from payorch.checkouts.provider_calls import context_for
from payorch.checkouts.records import CheckoutStatus
from payorch.connectors import service as connectors
from payorch.connectors.records import Connector
from payorch.db import Phases
from payorch.errors import ConnectorUnavailable, ResourceNotFound, ValidationFailed
from payorch.intents import service as intents
from payorch.intents.states import IntentStatus
from payorch.payments import disputes, hold_job, refunds
from payorch.payments import repository as payments
from payorch.payments import service as payment_records
from payorch.payments.hold_repository import HELD
from payorch.providers.base import (
    CheckoutRef,
    ConnectorContext,
    IncomingNotification,
    InvalidNotification,
    NotificationRef,
    PaymentResult,
    ProviderAdapter,
    ProviderCallError,
)
from payorch.providers.registry import UnknownProvider, get_adapter
from payorch.routing.attempt_log import offer_pending
from payorch.runtime import Runtime

RETRY_PATH = "/checkout-retry"  # checkouts/retry_page.py
log = logging.getLogger("payorch.checkouts")

RETURN_STATUSES = (IntentStatus.REQUIRES_ACTION.value,)
NOTIFIED_STATUSES = (IntentStatus.REQUIRES_ACTION.value, IntentStatus.PROCESSING.value)


def _known(provider: str) -> None:
    try:
        get_adapter(provider)
    except UnknownProvider:
        raise ResourceNotFound("No such provider.") from None


async def handle_return(
    runtime: Runtime, phases: Phases, provider: str, intent_id: str, params: Mapping[str, str]
) -> str:
    """Confirm and apply a buyer's return; answer where to send the buyer."""
    _known(provider)
    adapter = get_adapter(provider)

    async def confirm(ctx: ConnectorContext, ref: CheckoutRef) -> PaymentResult:
        return await adapter.confirm_return(ctx, ref, params)

    try:
        intent = await confirm_current_checkout(
            runtime,
            phases,
            intent_id,
            confirm,
            statuses=RETURN_STATUSES,
            provider=provider,
            buyer_return=True,
        )
    except ProviderCallError as exc:
        # Not confirmed now (unavailable, or a refusal such as bad credentials): the intent stays
        # as it is; a notification, the expiry job or a new return settles it. The buyer still
        # goes back to the shop.
        log.warning("return not confirmed by the provider: %s", exc.reason)
        async with phases.reading() as conn:
            intent = await intents.find_intent(conn, intent_id)
    if intent is None:
        raise ResourceNotFound(f"No payment intent {intent_id}.")
    if intent.status in RETURN_STATUSES and offer_pending(intent.routing) is not None:
        # Declined with a second chance (checkouts/second_chance.py): the buyer chooses on our page.
        return f"{runtime.settings.public_url}{RETRY_PATH}/{intent.id}"
    extra = {"payment_intent_id": intent.id}
    if adapter.adds_status_to_return:  # docs/api.md: provider B's return also adds `status`
        extra["status"] = intent.status
    return with_query(intent.return_url, extra)


def with_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    query.extend(params.items())
    return urlunsplit(parts._replace(query=urlencode(query)))


async def handle_notification(
    runtime: Runtime,
    phases: Phases,
    provider: str,
    connector_id: str,
    notification: IncomingNotification,
) -> None:
    """Verify a provider notification, then confirm by reading the payment and apply it."""
    _known(provider)
    adapter = get_adapter(provider)
    async with phases.reading() as conn:
        connector = await connectors.find_connector(conn, connector_id)
    if connector is None or connector.provider != provider:
        raise ResourceNotFound("No such connector.")
    try:
        ref = await adapter.parse_notification(context_for(runtime, connector), notification)
    except InvalidNotification as exc:
        raise ValidationFailed(f"The notification does not verify: {exc}") from None
    except ProviderCallError as exc:
        raise ConnectorUnavailable(1, f"Could not confirm the notification now: {exc.reason}") from None
    for one in (ref, *ref.more):  # every item of the notification acts, in its order
        await _act(runtime, phases, adapter, provider, connector, one)


async def _act(
    runtime: Runtime,
    phases: Phases,
    adapter: ProviderAdapter,
    provider: str,
    connector: Connector,
    ref: NotificationRef,
) -> None:
    if ref.provider_payment_reference is None:
        return  # a topic we do not act on
    application_id, reference = connector.application_id, ref.provider_payment_reference
    if ref.payment_intent_id is None:
        # About a payment's hold or refund only (the provider's word on a modification names
        # the payment, not the checkout): settled from the provider, if the payment is ours.
        await _settle_payment(runtime, provider, reference, application_id, ref)
        return

    async def read(ctx: ConnectorContext, checkout: CheckoutRef) -> PaymentResult:
        if ref.confirm is not None:  # the adapter read the payment while verifying the notice
            return await ref.confirm(ctx, checkout)
        return await adapter.read_status(ctx, checkout, payment_reference=ref.provider_payment_reference)

    try:
        await confirm_current_checkout(
            runtime,
            phases,
            ref.payment_intent_id,
            read,
            statuses=NOTIFIED_STATUSES,
            connector=connector,
            busy_raises=True,
        )
    except ProviderCallError as exc:
        # Answer 503 so the provider sends it again.
        raise ConnectorUnavailable(1, f"Could not confirm the notification now: {exc.reason}") from None
    except CheckoutBusy:
        # Not a 200 that drops it: a stopped checkout's payment must still be given back, and a
        # holder that died settles nothing (the provider sends it again).
        busy = "The checkout is being confirmed by another request; send it again."
        raise ConnectorUnavailable(1, busy) from None
    await _give_back(runtime, phases, connector, ref)
    if ref.authorization_code is not None:
        async with phases.each_statement() as conn:
            await payment_records.note_authorization_code(
                conn, application_id, provider, reference, ref.authorization_code
            )
    await _settle_payment(runtime, provider, reference, application_id, ref)
    if ref.dispute is not None:
        # A chargeback or mediation after the payment, as the provider's payment shows it (the
        # notice's body is never read): recorded on our payment, if we authorized one.
        async with phases.transaction() as conn:
            await disputes.observe(
                conn,
                runtime.clock,
                provider=provider,
                provider_reference=ref.provider_payment_reference,
                application_id=connector.application_id,
                seen=ref.dispute,
            )


async def _give_back(runtime: Runtime, phases: Phases, connector: Connector, ref: NotificationRef) -> None:
    """A payment on a checkout payorch stopped (replaced, or closed without this payment) goes
    back, for a provider that cannot stop a checkout first (NotificationRef.give_back)."""
    if ref.give_back is None or ref.checkout_id is None:
        return
    async with phases.reading() as conn:
        checkout = await checkouts.get(conn, ref.checkout_id)
    if checkout is None or checkout.connector_id != connector.id or checkout.status is CheckoutStatus.ACTIVE:
        return
    if checkout.payment_reference == ref.provider_payment_reference:
        return  # the payment the checkout was paid with (its word sent again)
    try:
        await ref.give_back(context_for(runtime, connector))
    except ProviderCallError as exc:
        raise ConnectorUnavailable(1, f"Could not give the payment back now: {exc.reason}") from None


async def _settle_payment(
    runtime: Runtime, provider: str, reference: str, application_id: str, ref: NotificationRef
) -> None:
    """A hold captured, released or lapsed at the provider: read the hold there and settle a
    payment still held; a refund applied or refused there: read the payment's PENDING refunds
    back. The notice says when, never what."""
    if not (ref.hold or ref.refund):
        return
    async with runtime.phases.reading() as conn:
        payment = await payments.by_provider_reference(conn, application_id, provider, reference)
        pending = await _pending_refunds(conn, payment.id) if payment is not None and ref.refund else []
    if payment is None:
        return
    if ref.hold and payment.status == HELD:
        try:
            await hold_job.settle_from_provider(runtime, payment.id, unread_raises=True)
        except ProviderCallError as exc:
            # Answer 503 so the provider sends it again: a notice answered 200 is never sent twice.
            raise ConnectorUnavailable(1, f"Could not read the hold now: {exc.reason}") from None
    for refund_id in pending:
        # A lookup that fails leaves the refund PENDING: the refunds job asks again.
        await refunds.resolve(runtime.phases, runtime, refund_id)


async def _pending_refunds(conn: AsyncConnection, payment_id: str) -> list[str]:
    return [r.id for r in await payments.refunds_of(conn, payment_id) if r.status == payments.PENDING]
