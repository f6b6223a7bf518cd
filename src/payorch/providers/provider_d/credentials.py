"""Provider D's connector credentials: the API key, the merchant account, the notifications' HMAC
key, and the live URL prefix PRODUCTION needs."""

from __future__ import annotations

from pydantic import Field, SecretStr

from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.provider_d import PROVIDER_D


class ProviderDCredentials(ConnectorCredentials):
    provider = PROVIDER_D
    api_key: SecretStr = Field(min_length=1, description="The API key of the web service user (X-API-Key).")
    merchant_account: str = Field(min_length=1, description="The merchant account code payments are made on.")
    hmac_key: SecretStr = Field(
        min_length=1,
        description="The HMAC key (hex) of the standard notifications webhook set up in the Customer Area.",
    )
    live_prefix: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9-]*$",
        description="PRODUCTION only: the live URL prefix (Customer Area, Developers > API URLs).",
    )
