"""Provider B's connector credentials: the API access token and the notification secret."""

from __future__ import annotations

from pydantic import Field, SecretStr

from payorch.providers.credentials import ConnectorCredentials
from payorch.providers.provider_b import PROVIDER_B


class ProviderBCredentials(ConnectorCredentials):
    provider = PROVIDER_B
    access_token: SecretStr = Field(min_length=1, description="The API access token (Bearer).")
    webhook_secret: SecretStr = Field(
        min_length=1, description="The secret notifications are signed with (x-signature)."
    )

