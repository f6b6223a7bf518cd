"""Who presents provider A's credentials: an application's MOCK keys (derived by its
registration, providers/provider_a/registration.py) or the provider's published integration keys
(the public owner, docs/simulator.md "Credentials")."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from payorch.crypto import Cipher
from payorch.providers.provider_a.registration import MOCK_DEFERRED_SUFFIX, mock_credentials
from payorch.simulator.credentials import PUBLIC_OWNER

# Webpay Plus integration credentials published by the provider (also the SDK's defaults): the
# commerce code that captures at once, the one configured for deferred capture
# (IntegrationCommerceCodes.WEBPAY_PLUS_DEFERRED), and the key both share.
PUBLIC_A_COMMERCE_CODE = "597055555532"
PUBLIC_A_DEFERRED_COMMERCE_CODE = "597055555540"
PUBLIC_A_API_KEY = "579B532A7440BB0C9079DED94D31EA1615BACEB56610332264630D42D0A36B1C"
_PUBLIC_CODES = (PUBLIC_A_COMMERCE_CODE, PUBLIC_A_DEFERRED_COMMERCE_CODE)


def owner_of(cipher: Cipher, presented: Mapping[str, str]) -> str | None:
    """The owner of ``presented`` (commerce_code, api_key), or None if they are not valid. An
    application's deferred commerce code (MOCK_DEFERRED_SUFFIX) belongs to the application."""
    code = presented.get("commerce_code") or ""
    key = presented.get("api_key") or ""
    if code in _PUBLIC_CODES:
        return PUBLIC_OWNER if hmac.compare_digest(key.encode(), PUBLIC_A_API_KEY.encode()) else None
    application_id = code.removesuffix(MOCK_DEFERRED_SUFFIX)
    if not application_id:
        return None
    expected = mock_credentials(cipher, application_id)["api_key"]
    return application_id if hmac.compare_digest(key.encode(), expected.encode()) else None


def deferred(commerce_code: str) -> bool:
    """Whether the commerce code is configured for deferred capture (its transactions held)."""
    return commerce_code == PUBLIC_A_DEFERRED_COMMERCE_CODE or commerce_code.endswith(MOCK_DEFERRED_SUFFIX)
