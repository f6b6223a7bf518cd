"""Provider D's credentials as the simulator checks them: the MOCK ones its registration derives
(the API key names the application) and the published test ones (docs/simulator.md). Each owner
has one merchant account and one HMAC key (hex) its notifications are signed with."""

from __future__ import annotations

from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.simulator.credentials import PUBLIC_OWNER, mock_credentials, owner_of_key
from payorch.simulator.provider_d.wire import NAME

PUBLIC_API_KEY = "AQE_payorch_sandbox_public_key"  # public on purpose
PUBLIC_MERCHANT_ACCOUNT = "PayorchSandboxECOM"
PUBLIC_HMAC_KEY = "7061796F7263682D73616E64626F782D7075626C69632D686D61632D6B657921"  # public on purpose


def merchant_account(cipher: Cipher, owner: str) -> str:
    public = owner == PUBLIC_OWNER
    return PUBLIC_MERCHANT_ACCOUNT if public else mock_credentials(cipher, NAME, owner)["merchant_account"]


def hmac_key(cipher: Cipher, owner: str) -> str:
    return PUBLIC_HMAC_KEY if owner == PUBLIC_OWNER else mock_credentials(cipher, NAME, owner)["hmac_key"]


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    return owner_of_key(cipher, NAME, "api_key", presented.get("api_key", ""), PUBLIC_API_KEY)
