"""Who presents provider A's credentials: an application's MOCK keys (derived by its
registration, providers/provider_a/registration.py) or the provider's published integration keys
(the public owner, docs/simulator.md "Credentials")."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.providers.provider_a.registration import mock_credentials
from payorch.simulator.credentials import PUBLIC_OWNER

# Webpay Plus integration credentials published by the provider (also the SDK's defaults).
PUBLIC_A_COMMERCE_CODE = "597055555532"
PUBLIC_A_API_KEY = "579B532A7440BB0C9079DED94D31EA1615BACEB56610332264630D42D0A36B1C"


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    """The owner of ``presented`` (commerce_code, api_key), or None if they are not valid."""
    code = presented.get("commerce_code") or ""
    key = presented.get("api_key") or ""
    if code == PUBLIC_A_COMMERCE_CODE:
        return PUBLIC_OWNER if hmac.compare_digest(key.encode(), PUBLIC_A_API_KEY.encode()) else None
    if not code:
        return None
    expected = mock_credentials(cipher, code)["api_key"]
    return code if hmac.compare_digest(key.encode(), expected.encode()) else None
