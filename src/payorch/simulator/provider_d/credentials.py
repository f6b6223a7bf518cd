"""Provider D's credentials as the simulator checks them: the MOCK ones (derived per application
by its registration, none stored: the API key names the application) and the published test
key for the official library by hand (docs/simulator.md), whose objects belong to the public owner.
Each owner has one merchant account and one HMAC key (hex) its notifications are signed with."""

from __future__ import annotations

import hmac
import re
from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.simulator.credentials import PUBLIC_OWNER, mock_credentials
from payorch.simulator.provider_d.wire import NAME

PUBLIC_API_KEY = "AQE_payorch_sandbox_public_key"  # public on purpose
PUBLIC_MERCHANT_ACCOUNT = "PayorchSandboxECOM"
PUBLIC_HMAC_KEY = "7061796F7263682D73616E64626F782D7075626C69632D686D61632D6B657921"  # public on purpose
_APPLICATION = re.compile(r"app_[0-9a-z]+")


def _mock(cipher: Cipher, owner: str) -> Mapping[str, str]:
    return mock_credentials(cipher, NAME, owner)


def merchant_account(cipher: Cipher, owner: str) -> str:
    return PUBLIC_MERCHANT_ACCOUNT if owner == PUBLIC_OWNER else _mock(cipher, owner)["merchant_account"]


def hmac_key(cipher: Cipher, owner: str) -> str:
    """The hex key ``owner``'s notification items are signed with."""
    return PUBLIC_HMAC_KEY if owner == PUBLIC_OWNER else _mock(cipher, owner)["hmac_key"]


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    """The owner of the presented ``api_key``: the public owner, the application it names
    (compared in constant time with that application's MOCK key), or None."""
    key = presented.get("api_key", "").encode()
    if hmac.compare_digest(key, PUBLIC_API_KEY.encode()):
        return PUBLIC_OWNER
    for application_id in _APPLICATION.findall(presented.get("api_key", ""))[:2]:
        if hmac.compare_digest(key, _mock(cipher, application_id)["api_key"].encode()):
            return str(application_id)
    return None
