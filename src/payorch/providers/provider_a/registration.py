"""Provider A as payorch knows it: its one registration (listed in providers/registry.py)."""

from __future__ import annotations

from payorch.crypto import Cipher
from payorch.providers.provider_a import decline_codes
from payorch.providers.provider_a.adapter import ProviderAAdapter
from payorch.providers.provider_a.credentials import (
    MOCK_DEFERRED_SUFFIX,
    ProviderACredentials,
    capture_methods,
)
from payorch.providers.provider_a.holds import ProviderAHolds
from payorch.providers.provider_a.reconciliation import ProviderAReader
from payorch.providers.registration import HoldSupport, ProviderRegistration, mock_secret


def mock_credentials(cipher: Cipher, application_id: str) -> dict[str, str]:
    """The application id is the commerce code; the key is derived from it."""
    return {
        "commerce_code": application_id,
        "api_key": mock_secret(cipher, "provider_a:" + application_id),
    }


__all__ = ["MOCK_DEFERRED_SUFFIX", "REGISTRATION", "mock_credentials", "mock_deferred_credentials"]


def mock_deferred_credentials(cipher: Cipher, application_id: str) -> dict[str, str]:
    """The MOCK credentials of a commerce code configured for deferred capture: its
    transactions are authorized and held until captured (docs/providers.md, "Holding and
    capturing")."""
    immediate = mock_credentials(cipher, application_id)
    return {**immediate, "commerce_code": application_id + MOCK_DEFERRED_SUFFIX}


REGISTRATION = ProviderRegistration(
    adapter=ProviderAAdapter(),
    display_name="Provider A (card form)",
    checkout_method="POST",
    credentials=ProviderACredentials,
    mock_credentials=mock_credentials,
    mock_priority=1,
    payment_errors=decline_codes.payment_error,
    reconciliation=ProviderAReader(),
    # Deferred capture (a commerce code configured for it): one capture of at most the
    # authorized amount, credit cards only; a full refund of the hold releases it; 7 days.
    holds=HoldSupport(partial_capture=True, max_captures=1, void=True, window_days=7),
    hold_calls=ProviderAHolds(),
    # Whether a connector captures at once or holds is its commerce code's configuration.
    connector_capture_methods=capture_methods,
)
