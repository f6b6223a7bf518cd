"""What an adapter call needs, built from our records: the connector's context, the checkout's
reference, the connector's health key and the lease that makes one actor at a time call."""

from __future__ import annotations

from datetime import timedelta

from payorch.checkouts.records import Checkout
from payorch.connectors.records import Connector
from payorch.connectors.service import decrypt_credentials
from payorch.intents.records import PaymentIntent
from payorch.providers.base import CheckoutRef, ConnectorContext
from payorch.providers.health import health_key
from payorch.runtime import Runtime


def context_for(runtime: Runtime, connector: Connector) -> ConnectorContext:
    return runtime.connector_contexts.build(
        connector_id=connector.id,
        application_id=connector.application_id,
        provider=connector.provider,
        mode=connector.mode,
        credentials=decrypt_credentials(runtime.cipher, connector),
    )


def ref_of(checkout: Checkout, intent: PaymentIntent) -> CheckoutRef:
    return CheckoutRef(
        payment_intent_id=intent.id,
        checkout_id=checkout.id,
        provider_reference=checkout.reference,
        amount=intent.amount,
        currency=intent.currency,
        provider_data=dict(checkout.provider_data),
        buyer_returned=checkout.buyer_returned_at is not None,
    )


def key_of(connector: Connector) -> str:
    return health_key(connector.provider, connector.mode.value, connector.id)


def lease_length(runtime: Runtime) -> timedelta:
    """Long enough for a confirmation (two provider calls) to finish; a crashed holder's lease
    runs out and the next actor takes over."""
    return timedelta(seconds=2 * runtime.settings.provider_timeout_seconds + 5)
