"""Provider B's connector credentials: the API access token and the notification secret."""

from __future__ import annotations

from pydantic import Field, SecretStr

from payorch.providers import PROVIDER_B
from payorch.providers.credentials import ConnectorCredentials


class ProviderBCredentials(ConnectorCredentials):
    provider = PROVIDER_B
    access_token: SecretStr = Field(min_length=1)
    webhook_secret: SecretStr = Field(min_length=1)

