"""The providers this build speaks: one registration line each (docs/providers.md).

Kept apart from the contract (base.py) so that the adapters import the contract and this module
imports the adapters: no module imports back the one that imports it.
"""

from __future__ import annotations

from payorch.providers import AUTO
from payorch.providers.base import ProviderAdapter
from payorch.providers.provider_a.registration import REGISTRATION as PROVIDER_A_REGISTRATION
from payorch.providers.provider_b.registration import REGISTRATION as PROVIDER_B_REGISTRATION
from payorch.providers.provider_c.registration import REGISTRATION as PROVIDER_C_REGISTRATION
from payorch.providers.provider_d.registration import REGISTRATION as PROVIDER_D_REGISTRATION
from payorch.providers.registration import ProviderRegistration

# In the order the API documents them.
REGISTRATIONS: tuple[ProviderRegistration, ...] = (
    PROVIDER_A_REGISTRATION,
    PROVIDER_B_REGISTRATION,
    PROVIDER_C_REGISTRATION,
    PROVIDER_D_REGISTRATION,
)

PROVIDER_IDS = tuple(r.provider_id for r in REGISTRATIONS)
# What a request may name as its provider: documented as this enum, checked in the same words.
PROVIDER_CHOICES = (AUTO, *PROVIDER_IDS)
_BY_ID = {r.provider_id: r for r in REGISTRATIONS}


class UnknownProvider(KeyError):
    pass


def registration_of(provider_id: str) -> ProviderRegistration:
    """The registration of ``provider_id``; UnknownProvider when this build has none."""
    try:
        return _BY_ID[provider_id]
    except KeyError:
        raise UnknownProvider(provider_id) from None


def get_adapter(provider_id: str) -> ProviderAdapter:
    """The adapter of ``provider_id`` (adapters hold no state: one instance each per process)."""
    return registration_of(provider_id).adapter
