"""MOCK credentials: derived from PAYORCH_SECRET_KEY, none stored, one set per application.

The simulator scopes all its state (transactions, preferences, payments, faults) by the owner a
credential maps to: an application id, or "public" for the published test credentials anyone may
use with the official SDKs by hand (provider A's own integration keys; for provider B, which
publishes none, a fixed test access token documented in docs/simulator.md).
"""

from __future__ import annotations

import hmac

from payorch.crypto import Cipher
from payorch.providers.registry import REGISTRATIONS

PUBLIC_OWNER = "public"
# Webpay Plus integration credentials published by the provider (also the SDK's defaults).
PUBLIC_A_COMMERCE_CODE = "597055555532"
PUBLIC_A_API_KEY = "579B532A7440BB0C9079DED94D31EA1615BACEB56610332264630D42D0A36B1C"

# Provider B's published sandbox credentials (docs/simulator.md, "Credentials"): the shape of a
# real test access token ("TEST-..."), public on purpose, for its SDK by hand.
PUBLIC_B_ACCESS_TOKEN = "TEST-0000000000000000-000000-payorchsandboxpublictesttoken-0"  # noqa: S105
PUBLIC_B_WEBHOOK_SECRET = "payorch-sandbox-public-webhook-secret"  # noqa: S105



def mock_credentials(cipher: Cipher, provider: str, application_id: str) -> dict[str, str]:
    """The credentials a MOCK connector of ``application_id`` presents to the simulated
    ``provider`` (the simulator's name for it), as its registration derives them."""
    for registration in REGISTRATIONS:
        if registration.simulator_name == provider:
            return registration.mock_credentials(cipher, application_id)
    raise ValueError(f"unknown provider {provider!r}")


def webhook_secret(cipher: Cipher, application_id: str) -> str:
    """Provider B's notification signing secret for ``application_id`` (or the public owner)."""
    if application_id == PUBLIC_OWNER:
        return PUBLIC_B_WEBHOOK_SECRET
    return mock_credentials(cipher, "provider_b", application_id)["webhook_secret"]


def application_of(cipher: Cipher, provider: str, presented: dict[str, str]) -> str | None:
    """The owner of ``presented`` credentials, or None if they are not valid MOCK credentials."""
    if provider == "provider_a":
        code = presented.get("commerce_code") or ""
        key = presented.get("api_key") or ""
        if code == PUBLIC_A_COMMERCE_CODE:
            return (
                PUBLIC_OWNER
                if hmac.compare_digest(key.encode(), PUBLIC_A_API_KEY.encode())
                else None
            )
        if not code:
            return None
        expected = mock_credentials(cipher, "provider_a", code)["api_key"]
        return code if hmac.compare_digest(key.encode(), expected.encode()) else None
    if provider == "provider_b":
        token = presented.get("access_token") or ""
        if hmac.compare_digest(token.encode(), PUBLIC_B_ACCESS_TOKEN.encode()):
            return PUBLIC_OWNER
        if not token.startswith("TEST-") or token.count("-") < 2:
            return None
        application_id = token[len("TEST-") : token.rindex("-")]
        if not application_id:
            return None
        expected = mock_credentials(cipher, "provider_b", application_id)["access_token"]
        return application_id if hmac.compare_digest(token.encode(), expected.encode()) else None
    return None
