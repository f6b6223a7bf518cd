"""Provider D's one registration (listed in providers/registry.py)."""

from __future__ import annotations

from payorch.crypto import Cipher
from payorch.providers.provider_d import decline_codes, wire
from payorch.providers.provider_d.adapter import ProviderDAdapter, ProviderDCredentials, ProviderDHolds
from payorch.providers.registration import HoldSupport, Notifications, ProviderRegistration, mock_secret


def mock_credentials(cipher: Cipher, application_id: str) -> dict[str, str]:
    """An API key that names the application, its merchant account, an HMAC key (hex)."""
    return {
        "api_key": f"AQE_{application_id}_" + mock_secret(cipher, "provider_d:" + application_id)[:32],
        "merchant_account": f"Payorch{application_id.replace('_', '')}ECOM",
        "hmac_key": mock_secret(cipher, "provider_d-hmac:" + application_id).upper(),
    }


REGISTRATION = ProviderRegistration(
    adapter=ProviderDAdapter(),
    display_name="Provider D (Adyen Hosted Checkout)",
    checkout_method="GET",
    credentials=ProviderDCredentials,
    mock_credentials=mock_credentials,
    mock_priority=4,
    payment_errors=decline_codes.payment_error,
    # No reconciliation reader: the Checkout API has no call that lists or reads payments.
    # Standard notifications, registered in the Customer Area with its HMAC key: Adyen's word.
    notifications=Notifications(
        True, tuple(sorted(wire.EVENTS)), authoritative=True, signed_with="hmac_key"
    ),
    # additionalData.manualCapture: one capture of all or part (the rest cancelled), or a cancel;
    # the authorisation lapses (EXPIRE) after a window that depends on the card scheme: 7 days.
    holds=HoldSupport(partial_capture=True, max_captures=1, void=True, window_days=7),
    hold_calls=ProviderDHolds(),
)
