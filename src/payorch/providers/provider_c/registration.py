"""Provider C as payorch knows it: its one registration (listed in providers/registry.py)."""

from __future__ import annotations

from payorch.crypto import Cipher
from payorch.providers.provider_c import decline_codes, wire
from payorch.providers.provider_c.adapter import ProviderCAdapter
from payorch.providers.provider_c.credentials import ProviderCCredentials
from payorch.providers.provider_c.holds import ProviderCHolds
from payorch.providers.provider_c.reconciliation import ProviderCReader
from payorch.providers.registration import HoldSupport, Notifications, ProviderRegistration, mock_secret

MOCK_KEY_PREFIX = "sk_test_"


def mock_credentials(cipher: Cipher, application_id: str) -> dict[str, str]:
    """A test secret key that names the application (``sk_test_<application>_<mac>``), and an
    events signing secret derived from it."""
    key_mac = mock_secret(cipher, "provider_c:" + application_id)[:32]
    return {
        "secret_key": f"{MOCK_KEY_PREFIX}{application_id}_{key_mac}",
        "webhook_secret": "whsec_" + mock_secret(cipher, "provider_c-webhook:" + application_id)[:40],
    }


REGISTRATION = ProviderRegistration(
    adapter=ProviderCAdapter(),
    display_name="Provider C (Stripe Checkout)",
    checkout_method="GET",
    credentials=ProviderCCredentials,
    mock_credentials=mock_credentials,
    mock_priority=3,
    payment_errors=decline_codes.payment_error,
    reconciliation=ProviderCReader(),
    # An endpoint registered at the provider, subscribed to the events the adapter reads.
    notifications=Notifications(
        True, tuple(sorted(wire.SESSION_EVENTS | wire.DISPUTE_EVENTS | wire.HOLD_EVENTS))
    ),
    # Manual capture (payment_intent_data[capture_method]=manual): one capture of all or part
    # (the rest released), or cancel; a card authorization lapses after 7 days.
    holds=HoldSupport(partial_capture=True, max_captures=1, void=True, window_days=7),
    hold_calls=ProviderCHolds(),
)
