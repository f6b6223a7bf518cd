"""Provider A as payorch knows it: its one registration (listed in providers/registry.py)."""

from __future__ import annotations

from payorch.crypto import Cipher
from payorch.providers.provider_a import decline_codes
from payorch.providers.provider_a.adapter import ProviderAAdapter
from payorch.providers.provider_a.credentials import ProviderACredentials
from payorch.providers.provider_a.reconciliation import ProviderAReader
from payorch.providers.registration import ProviderRegistration, mock_secret


def mock_credentials(cipher: Cipher, application_id: str) -> dict[str, str]:
    """The application id is the commerce code; the key is derived from it."""
    return {
        "commerce_code": application_id,
        "api_key": mock_secret(cipher, "provider_a:" + application_id),
    }


REGISTRATION = ProviderRegistration(
    adapter=ProviderAAdapter(),
    display_name="Provider A (card form)",
    checkout_method="POST",
    credentials=ProviderACredentials,
    mock_credentials=mock_credentials,
    mock_priority=1,
    payment_errors=decline_codes.payment_error,
    reconciliation=ProviderAReader(),
)
