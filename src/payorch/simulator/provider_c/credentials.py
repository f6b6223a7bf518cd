"""Provider C's credentials as the simulator checks them: the MOCK ones (derived per
application by providers/provider_c/registration.py, none stored) and the published test key
for the official SDK by hand (docs/simulator.md), whose objects belong to the public owner."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.providers.provider_c.registration import MOCK_KEY_PREFIX, REGISTRATION, mock_credentials
from payorch.simulator.credentials import PUBLIC_OWNER, credential

PUBLIC_SECRET_KEY = "sk_test_payorchsandboxpublickey"  # noqa: S105 - public on purpose
PUBLIC_WEBHOOK_SECRET = "whsec_payorchsandboxpublicwebhooksecret"  # noqa: S105 - public on purpose


def webhook_secret(cipher: Cipher, owner: str) -> str:
    """The secret the simulator signs ``owner``'s events with."""
    return credential(cipher, REGISTRATION.simulator_name, owner, "webhook_secret", PUBLIC_WEBHOOK_SECRET)


def owner_of_key(cipher: Cipher, secret_key: str) -> str | None:
    """The owner of ``secret_key``, or None when it is not a valid key of this simulator."""
    if hmac.compare_digest(secret_key.encode(), PUBLIC_SECRET_KEY.encode()):
        return PUBLIC_OWNER
    rest = secret_key.removeprefix(MOCK_KEY_PREFIX)
    if rest == secret_key or "_" not in rest:
        return None
    application_id = rest[: rest.rindex("_")]
    if not application_id:
        return None
    expected = mock_credentials(cipher, application_id)["secret_key"]
    return application_id if hmac.compare_digest(secret_key.encode(), expected.encode()) else None


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    """The registry's form: the owner of presented credentials (``secret_key``)."""
    return owner_of_key(cipher, presented.get("secret_key") or "")
