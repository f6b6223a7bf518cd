"""Build what an adapter call needs from our rows: the connector context and the checkout ref."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import Row

from payorch.connectors.service import decrypt_credentials
from payorch.providers.base import CheckoutRef, ConnectorContext, ProviderAdapter, get_adapter
from payorch.providers.health import health_key
from payorch.runtime import Runtime


def adapter_of(provider: str) -> ProviderAdapter:
    return get_adapter(provider)


def context_for(runtime: Runtime, connector: Row) -> ConnectorContext:  # type: ignore[type-arg]
    return ConnectorContext.build(
        runtime,
        connector_id=connector.id,
        application_id=connector.application_id,
        provider=connector.provider,
        mode=connector.mode,
        credentials=decrypt_credentials(runtime.cipher, connector),
    )


def ref_of(checkout: Row, intent: Row) -> CheckoutRef:  # type: ignore[type-arg]
    return CheckoutRef(
        payment_intent_id=intent.id,
        checkout_id=checkout.id,
        provider_reference=checkout.reference,
        amount=intent.amount,
        currency=intent.currency,
        provider_data=dict(checkout.provider_data or {}),
    )


def key_of(connector: Row) -> str:  # type: ignore[type-arg]
    return health_key(connector.provider, connector.mode, connector.id)


def lease_length(runtime: Runtime) -> timedelta:
    """Long enough for a confirmation (two provider calls) to finish; a crashed holder's lease
    runs out and the next actor takes over."""
    return timedelta(seconds=2 * runtime.settings.provider_timeout_seconds + 5)
