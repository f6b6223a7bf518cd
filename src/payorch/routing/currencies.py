"""Which currencies a provider can charge: asked of its adapter, here only (routing's rule)."""

from __future__ import annotations

from payorch.providers.registry import UnknownProvider, get_adapter


def currencies_of(provider: str) -> frozenset[str]:
    try:
        return get_adapter(provider).supported_currencies
    except UnknownProvider:
        return frozenset()


def charges(provider: str, currency: str) -> bool:
    try:
        return bool(get_adapter(provider).supports_currency(currency))
    except UnknownProvider:
        return False
