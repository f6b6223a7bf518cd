"""Provider B as payorch knows it: its one registration (listed in providers/registry.py)."""

from __future__ import annotations

from payorch.crypto import Cipher
from payorch.providers.provider_b import decline_codes
from payorch.providers.provider_b.adapter import ProviderBAdapter
from payorch.providers.provider_b.credentials import ProviderBCredentials
from payorch.providers.provider_b.reconciliation import ProviderBReader
from payorch.providers.registration import Notifications, ProviderRegistration, mock_secret


def mock_credentials(cipher: Cipher, application_id: str) -> dict[str, str]:
    """A token shaped like a real test token ("TEST-<collector>-<mac>") that names the
    application, and a notification secret derived from it."""
    token_mac = mock_secret(cipher, "provider_b:" + application_id)
    return {
        "access_token": f"TEST-{application_id}-{token_mac[:32]}",
        "webhook_secret": mock_secret(cipher, "provider_b-webhook:" + application_id),
    }


REGISTRATION = ProviderRegistration(
    adapter=ProviderBAdapter(),
    display_name="Provider B (wallet)",
    checkout_method="GET",
    credentials=ProviderBCredentials,
    mock_credentials=mock_credentials,
    mock_priority=2,
    payment_errors=decline_codes.payment_error,
    reconciliation=ProviderBReader(),
    # Sent as each checkout's notification_url; the provider sends topic payment (and
    # merchant_order, which names the payment to read).
    notifications=Notifications(False, ("payment", "merchant_order")),
    # Checkout Pro cannot hold: a preference has no capture field, every payment is captured.
    holds=None,
)
