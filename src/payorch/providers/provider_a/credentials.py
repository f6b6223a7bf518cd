"""Provider A's connector credentials: the commerce code and its API key secret."""

from __future__ import annotations

from pydantic import Field, SecretStr

from payorch.providers import PROVIDER_A
from payorch.providers.credentials import ConnectorCredentials


class ProviderACredentials(ConnectorCredentials):
    provider = PROVIDER_A
    commerce_code: str = Field(min_length=1)
    api_key: SecretStr = Field(min_length=1)

