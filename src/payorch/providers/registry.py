"""The adapters this build speaks, by provider id.

Kept apart from the contract (base.py) so that the adapters import the contract and this module
imports the adapters: no module imports back the one that imports it.
"""

from __future__ import annotations

from payorch.providers.base import ProviderAdapter
from payorch.providers.provider_a.adapter import ProviderAAdapter
from payorch.providers.provider_b.adapter import ProviderBAdapter

# Adapters hold no state: one instance each for the whole process.
_ADAPTERS: dict[str, ProviderAdapter] = {
    adapter.provider_id: adapter for adapter in (ProviderAAdapter(), ProviderBAdapter())
}


class UnknownProvider(KeyError):
    pass


def get_adapter(provider_id: str) -> ProviderAdapter:
    """The adapter of ``provider_id``."""
    try:
        return _ADAPTERS[provider_id]
    except KeyError:
        raise UnknownProvider(provider_id) from None
