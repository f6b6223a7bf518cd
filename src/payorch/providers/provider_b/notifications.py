"""Provider B's notifications: which payment a notice is about, learned from the provider.

Two styles arrive (docs/simulator.md, "Provider B"): the webhook (``?data.id=..&type=..``,
signed with the connector's webhook_secret: verified, else refused) and the older IPN
(``?topic=..&id=..``, unsigned). Topics ``payment`` and ``merchant_order`` (the webhook calls it
``topic_merchant_order_wh``). Neither the body nor the query is believed: they only say what to
read, and the payment read from the provider is what the caller confirms against its checkout.
"""

from __future__ import annotations

from collections.abc import Callable

from payorch.providers.base import (
    ConnectorContext,
    IncomingNotification,
    InvalidNotification,
    NotificationRef,
    ProviderRejected,
)
from payorch.providers.calls import read_or_none
from payorch.providers.provider_b import wire
from payorch.providers.provider_b.credentials import ProviderBCredentials
from payorch.providers.provider_b.payment_results import dispute_of
from payorch.providers.provider_b.refusals import rejected
from payorch.providers.provider_b.signature import (
    NOTIFICATION_TOLERANCE_SECONDS,
    verify_signature,
)
from payorch.providers.references import ProviderIds

IDS = ProviderIds(r"[A-Za-z0-9_-]{1,64}")  # what a provider id may look like in our paths
Headers = Callable[[ConnectorContext], dict[str, str]]  # the API's headers (after verifying)


async def parse_notification(
    ctx: ConnectorContext, notification: IncomingNotification, api_headers: Headers
) -> tuple[NotificationRef, wire.ProviderBPayment | None]:
    """Which payment to read, learned from the provider. Two styles arrive: the webhook
    (``?data.id=..&type=..``, signed: verified, else refused) and the older IPN
    (``?topic=..&id=..``, unsigned). Neither is believed: the payment (or, for the
    merchant_order topic, the merchant order and then its payment) is read from the
    provider, and the caller confirms it against its checkout. Also answers the payment read
    (None when none was)."""
    query = notification.query
    named: str | None
    if "data.id" not in query and query.get("topic") and query.get("id"):
        topic, named = query["topic"], query["id"]  # IPN: only a hint of what to read
    else:
        named = _verified_id(ctx, notification)
        body = wire.notification_of(notification.body)
        topic = query.get("type") or query.get("topic") or body.type or ""
        if named is None and body.data is not None and body.data.get("id") is not None:
            named = str(body.data["id"])  # only when the signature did not cover an id
    if topic == wire.WEBHOOK_MERCHANT_ORDER:
        topic = wire.TOPIC_MERCHANT_ORDER
    if topic not in (wire.TOPIC_PAYMENT, wire.TOPIC_MERCHANT_ORDER):
        return NotificationRef(provider_payment_reference=None, topic=topic), None
    if named is None or not IDS.valid(named):
        raise InvalidNotification(f"a {topic} notification without a usable id")
    headers = api_headers(ctx)
    payment_id: str | None = named
    if topic == wire.TOPIC_MERCHANT_ORDER:
        payment_id = await _payment_of_order(ctx, named, headers)
        if payment_id is None:
            return NotificationRef(provider_payment_reference=None, topic=topic), None
    path = f"{wire.PAYMENTS}/{payment_id}"
    payment = await read_or_none(
        ctx, "read payment", path, wire.ProviderBPayment, headers=headers, refusals=rejected
    )
    if payment is None:
        return NotificationRef(provider_payment_reference=payment_id, topic=topic), None
    ref = NotificationRef(
        provider_payment_reference=payment.id,
        payment_intent_id=payment.external_reference,
        topic=topic,
        dispute=dispute_of(payment),
    )
    return ref, payment


def _verified_id(ctx: ConnectorContext, notification: IncomingNotification) -> str | None:
    try:
        secret = ProviderBCredentials.of(ctx).webhook_secret.get_secret_value()
    except ProviderRejected:
        raise InvalidNotification("the connector has no webhook_secret") from None
    return verify_signature(
        secret,
        notification.headers,
        notification.query,
        now=ctx.clock.now(),
        tolerance_seconds=NOTIFICATION_TOLERANCE_SECONDS,
    )


async def _payment_of_order(ctx: ConnectorContext, order_id: str, headers: dict[str, str]) -> str | None:
    """The merchant order's payment that speaks for it (approved first, else the newest);
    None when it has none (or the provider knows no such order)."""
    path = f"{wire.MERCHANT_ORDERS}/{order_id}"
    order = await read_or_none(
        ctx, "read merchant order", path, wire.MerchantOrder, headers=headers, refusals=rejected
    )
    if order is None or not order.payments:
        return None
    approved = [p for p in order.payments if p.status == wire.APPROVED]
    return (approved or order.payments)[-1].id
