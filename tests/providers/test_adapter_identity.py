"""base.AdapterIdentity.takes_currency: a checkout in a currency the provider does not take is
refused (ProviderRejected naming the provider) before any call; one it takes passes."""

from __future__ import annotations

import pytest

from payorch.providers.base import AdapterIdentity, ProviderRejected
from payorch.providers.registration import ProviderRegistration
from payorch.providers.registry import REGISTRATIONS


@pytest.mark.parametrize("registration", REGISTRATIONS, ids=lambda r: r.simulator_name)
def test_a_currency_is_taken_or_refused_by_the_adapters_own_list(registration: ProviderRegistration) -> None:
    adapter = registration.adapter
    if not isinstance(adapter, AdapterIdentity):
        pytest.skip("the adapter answers supports_currency itself")
    adapter.takes_currency(sorted(adapter.supported_currencies)[0])
    with pytest.raises(ProviderRejected) as refused:
        adapter.takes_currency("XTS")  # ISO 4217's code for testing: no provider takes it
    assert refused.value.provider == adapter.provider_id
    assert "unknown currency XTS" in str(refused.value)
