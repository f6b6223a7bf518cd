"""Which connectors a checkout request may use, in order (docs/checkout.md, "Checkout request").

`auto`: the merchant's enabled connectors by priority, keeping only providers that support the
intent's currency; health (skipping) is applied while trying them, in service.py. An explicit
provider: its connector if enabled, whatever its health.
"""

from __future__ import annotations

from payorch.connectors.records import Connector
from payorch.errors import ConnectorNotConfigured
from payorch.providers import AUTO
from payorch.providers.registry import UnknownProvider, get_adapter


def supports_currency(provider: str, currency: str) -> bool:
    try:
        adapter = get_adapter(provider)
    except UnknownProvider:
        return False
    return bool(adapter.supports_currency(currency))


def candidates(connectors: list[Connector], requested: str, currency: str) -> list[Connector]:
    enabled = [c for c in connectors if c.enabled]
    if requested != AUTO:
        chosen = [c for c in enabled if c.provider == requested]
        if not chosen:
            raise ConnectorNotConfigured(f"The provider {requested} is not enabled for this merchant.")
        if not supports_currency(requested, currency):
            raise ConnectorNotConfigured(f"The provider {requested} does not support {currency}.")
        return chosen
    usable = [c for c in enabled if supports_currency(c.provider, currency)]
    if not usable:
        if enabled:
            raise ConnectorNotConfigured(f"No enabled provider of this merchant supports {currency}.")
        raise ConnectorNotConfigured("The merchant has no enabled provider.")
    return sorted(usable, key=lambda c: (c.priority, c.created_at, c.id))
