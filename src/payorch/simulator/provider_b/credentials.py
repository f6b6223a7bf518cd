"""Who presents provider B's access token: an application's MOCK token (derived by its
registration, providers/provider_b/registration.py) or the published sandbox token (the public
owner, docs/simulator.md "Credentials"); and the secret its notifications are signed with."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.providers.provider_b.registration import REGISTRATION, mock_credentials
from payorch.simulator.credentials import PUBLIC_OWNER, credential

# Provider B's published sandbox credentials: the shape of a real test access token
# ("TEST-..."), public on purpose, for its SDK by hand.
PUBLIC_B_ACCESS_TOKEN = "TEST-0000000000000000-000000-payorchsandboxpublictesttoken-0"  # noqa: S105
PUBLIC_B_WEBHOOK_SECRET = "payorch-sandbox-public-webhook-secret"  # noqa: S105


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    """The owner of ``presented`` (access_token), or None if it is not a valid token."""
    token = presented.get("access_token") or ""
    if hmac.compare_digest(token.encode(), PUBLIC_B_ACCESS_TOKEN.encode()):
        return PUBLIC_OWNER
    if not token.startswith("TEST-") or token.count("-") < 2:
        return None
    application_id = token[len("TEST-") : token.rindex("-")]
    if not application_id:
        return None
    expected = mock_credentials(cipher, application_id)["access_token"]
    return application_id if hmac.compare_digest(token.encode(), expected.encode()) else None


def webhook_secret(cipher: Cipher, application_id: str) -> str:
    """Provider B's notification signing secret for ``application_id`` (or the public owner)."""
    name, public = REGISTRATION.simulator_name, PUBLIC_B_WEBHOOK_SECRET
    return credential(cipher, name, application_id, "webhook_secret", public)
